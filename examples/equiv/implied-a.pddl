; Two blocks on the table; the goal is a on b.
(define (problem implied-a)
  (:domain blocksworld)
  (:objects a b)
  (:init (arm-empty) (on-table a) (on-table b) (clear a) (clear b))
  (:goal (on a b)))
