; The same three blocks, but the goal puts only q on r: s may end anywhere, so more states reach this goal
; than tower-a's (not equivalent: the goals differ in their 'on' facts, 2 vs 1).
(define (problem pair-b)
  (:domain blocksworld)
  (:objects q r s)
  (:init (arm-empty) (on-table q) (on-table r) (on-table s) (clear q) (clear r) (clear s))
  (:goal (on q r)))
