; The inspection domain of "Task and Motion Planning in Hierarchical 3D Scene Graphs" (Ray et al., 2024),
; as a classical domain with action costs (centimetres). Symbols are places and objects; a robot moves
; between connected symbols (standing at an object's approach place when "at" the object), inspects a
; suspicious object from it (making it safe), and may not enter a place a suspicious object blocks.
(define (domain inspection)
  (:requirements :typing :negative-preconditions :disjunctive-preconditions :universal-preconditions
                 :action-costs)
  (:types symbol - object
          place obj - symbol)
  (:predicates (at ?s - symbol)
               (connected ?from ?to - symbol)
               (visited ?s - symbol)
               (suspicious ?o - obj)
               (safe ?o - obj)
               (blocks ?o - obj ?s - symbol))
  (:functions (total-cost) - number
              (distance ?from ?to - symbol) - number)
  (:action move
    :parameters (?from ?to - symbol)
    :precondition (and (at ?from) (connected ?from ?to)
                       (forall (?o - obj) (or (not (blocks ?o ?to)) (safe ?o))))
    :effect (and (not (at ?from)) (at ?to) (visited ?to)
                 (increase (total-cost) (distance ?from ?to))))
  (:action inspect
    :parameters (?o - obj)
    :precondition (and (at ?o) (suspicious ?o))
    :effect (and (not (suspicious ?o)) (safe ?o) (increase (total-cost) 100))))
