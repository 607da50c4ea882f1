; The goal of implied-a with three more facts that every state reaching it has anyway (a is on b, so a is clear,
; b stands on the table and the hand is empty): the same set of goal states (equivalent).
(define (problem implied-b)
  (:domain blocksworld)
  (:objects p q)
  (:init (arm-empty) (on-table p) (on-table q) (clear p) (clear q))
  (:goal (and (on p q) (clear p) (on-table q) (arm-empty))))
