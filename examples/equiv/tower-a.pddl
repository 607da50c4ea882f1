; Three blocks on the table; the goal is a three-block tower: x on y on z.
(define (problem tower-a)
  (:domain blocksworld)
  (:objects x y z)
  (:init (arm-empty) (on-table x) (on-table y) (on-table z) (clear x) (clear y) (clear z))
  (:goal (and (on x y) (on y z))))
