; renamed-a with other names and the facts in another order: the same task (equivalent, x -> a, y -> b, z -> c).
(define (problem renamed-b)
  (:domain blocksworld)
  (:objects z y x)
  (:init (clear z) (on-table y) (clear x) (on-table z) (arm-empty) (clear y) (on-table x))
  (:goal (and (on y z) (on x y))))
