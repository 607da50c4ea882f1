; Three blocks on the table; the goal is one tower: a on b on c.
(define (problem renamed-a)
  (:domain blocksworld)
  (:objects a b c)
  (:init (arm-empty) (on-table a) (on-table b) (on-table c) (clear a) (clear b) (clear c))
  (:goal (and (on a b) (on b c))))
