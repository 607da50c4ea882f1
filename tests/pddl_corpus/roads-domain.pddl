;; Written for servicerobot's tests: a van drives between towns; each road has a static length (action costs).
(define (domain roads)
  (:requirements :strips :typing :action-costs)
  (:types town vehicle)
  (:predicates (at ?v - vehicle ?t - town) (road ?a ?b - town) (visited ?t - town))
  (:functions (road-length ?a ?b - town) - number
              (total-cost) - number)
  (:action drive
    :parameters (?v - vehicle ?from ?to - town)
    :precondition (and (at ?v ?from) (road ?from ?to))
    :effect (and (not (at ?v ?from)) (at ?v ?to) (visited ?to)
                 (increase (total-cost) (road-length ?from ?to))))
  (:action honk
    :parameters (?v - vehicle ?t - town)
    :precondition (at ?v ?t)
    :effect (and (visited ?t) (increase (total-cost) 1))))
