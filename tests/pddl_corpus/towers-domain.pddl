;; Written for servicerobot's tests: stacking with derived predicates. `above` is recursive; `exposed`
;; negates `above` (a lower stratum); `ready` uses `exposed` (a third stratum).
(define (domain towers)
  (:requirements :strips :typing :negative-preconditions :derived-predicates :existential-preconditions)
  (:types disc)
  (:predicates (on ?x ?y - disc) (ground ?x - disc) (clear ?x - disc) (held ?x - disc) (hand-free)
               (above ?x ?y - disc) (exposed ?x - disc) (ready ?x - disc))
  (:derived (above ?x ?y - disc) (or (on ?x ?y) (exists (?z - disc) (and (on ?x ?z) (above ?z ?y)))))
  (:derived (exposed ?x - disc) (not (exists (?y - disc) (above ?y ?x))))
  (:derived (ready ?x) (and (exposed ?x) (not (held ?x))))
  (:action lift
    :parameters (?x ?y - disc)
    :precondition (and (on ?x ?y) (ready ?x) (hand-free))
    :effect (and (held ?x) (clear ?y) (not (on ?x ?y)) (not (clear ?x)) (not (hand-free))))
  (:action pick
    :parameters (?x - disc)
    :precondition (and (ground ?x) (ready ?x) (hand-free))
    :effect (and (held ?x) (not (ground ?x)) (not (clear ?x)) (not (hand-free))))
  (:action drop
    :parameters (?x ?y - disc)
    :precondition (and (held ?x) (exposed ?y) (not (= ?x ?y)))
    :effect (and (on ?x ?y) (clear ?x) (hand-free) (not (held ?x)) (not (clear ?y))))
  (:action put-down
    :parameters (?x - disc)
    :precondition (held ?x)
    :effect (and (ground ?x) (clear ?x) (hand-free) (not (held ?x)))))
