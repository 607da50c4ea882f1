;; Written for servicerobot's tests: `pet` is listed under two parents (an animal that lives indoors) and
;; `(near ?x ?x)` repeats a variable in its declaration; Fast Downward accepts both.
(define (domain zoo)
  (:requirements :strips :typing)
  (:types pet - animal
          pet - indoor
          animal indoor place)
  (:predicates (fed ?a - animal) (inside ?i - indoor ?p - place) (at-keeper ?p - place)
               (near ?x ?x - place))
  (:action walk
    :parameters (?from ?to - place)
    :precondition (and (at-keeper ?from) (near ?from ?to))
    :effect (and (not (at-keeper ?from)) (at-keeper ?to)))
  (:action feed
    :parameters (?a - animal ?p - place)
    :precondition (at-keeper ?p)
    :effect (fed ?a))
  (:action bring-in
    :parameters (?i - indoor ?p - place)
    :precondition (at-keeper ?p)
    :effect (inside ?i ?p)))
