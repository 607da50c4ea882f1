; Gripper-a's start under other names, but one ball wanted in the other room and one back where it started:
; the initial states map onto each other, the goals under no renaming (not equivalent).
(define (problem gripper-b)
  (:domain gripper)
  (:objects r1 r2 b1 b2 g1 g2)
  (:init (room r1) (room r2) (ball b1) (ball b2) (gripper g1) (gripper g2)
         (at-robby r1) (free g1) (free g2) (at b1 r1) (at b2 r1))
  (:goal (and (at b1 r2) (at b2 r1))))
