;; The household domain of servicerobot.
;; Every predicate is unary or binary, so every fact is one knowledge-graph triplet:
;; (p a) is (a, p, true) and (p a b) is (a, p, b).
(define (domain household)
  (:requirements :strips :typing :negative-preconditions :disjunctive-preconditions
                 :universal-preconditions :existential-preconditions :conditional-effects)
  (:types
    room locatable - object
    robot person fixture item - locatable
    surface container light trashcan - fixture
    bed shelf - surface
    sink openable - container
    fridge washer dryer - openable
    dish food clothing book gadget decor - item)

  (:predicates
    (in-room ?x - locatable ?r - room)        ; robot, people and fixtures (static for fixtures)
    (connected ?a - room ?b - room)           ; static, symmetric
    (on ?i - item ?s - surface)
    (inside ?i - item ?c - container)
    (holding ?r - robot ?i - item)
    (hand-empty ?r - robot)
    (held-by ?i - item ?p - person)
    (closed ?c - container)                   ; only openable containers are ever closed
    (light-on ?l - light)
    (faucet-on ?s - sink)
    (chills ?c - container)                   ; static: the container keeps food cold (a fridge)
    (dirty ?i - item)
    (wet ?i - clothing)
    (cold ?i - item)
    (broken ?i - item)
    (discarded ?i - item)
    (made ?b - bed))

  (:action move
    :parameters (?r - robot ?from - room ?to - room)
    :precondition (and (in-room ?r ?from) (connected ?from ?to))
    :effect (and (not (in-room ?r ?from)) (in-room ?r ?to)))

  (:action pick-up
    :parameters (?r - robot ?i - item ?s - surface ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?s ?room) (on ?i ?s) (hand-empty ?r))
    :effect (and (not (on ?i ?s)) (not (hand-empty ?r)) (holding ?r ?i)))

  (:action take-out
    :parameters (?r - robot ?i - item ?c - container ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?c ?room) (inside ?i ?c) (hand-empty ?r)
                       (not (closed ?c)))
    :effect (and (not (inside ?i ?c)) (not (hand-empty ?r)) (holding ?r ?i)))

  (:action place-on
    :parameters (?r - robot ?i - item ?s - surface ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?s ?room) (holding ?r ?i))
    :effect (and (not (holding ?r ?i)) (hand-empty ?r) (on ?i ?s)))

  (:action put-in
    :parameters (?r - robot ?i - item ?c - container ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?c ?room) (holding ?r ?i) (not (closed ?c)))
    :effect (and (not (holding ?r ?i)) (hand-empty ?r) (inside ?i ?c)
                 (when (chills ?c) (cold ?i))))

  (:action open
    :parameters (?r - robot ?c - openable ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?c ?room) (closed ?c))
    :effect (not (closed ?c)))

  (:action close
    :parameters (?r - robot ?c - openable ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?c ?room) (not (closed ?c)))
    :effect (closed ?c))

  (:action switch-on-light
    :parameters (?r - robot ?l - light ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?l ?room) (not (light-on ?l)))
    :effect (light-on ?l))

  (:action switch-off-light
    :parameters (?r - robot ?l - light ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?l ?room) (light-on ?l))
    :effect (not (light-on ?l)))

  (:action turn-on-faucet
    :parameters (?r - robot ?s - sink ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?s ?room) (not (faucet-on ?s)))
    :effect (faucet-on ?s))

  (:action turn-off-faucet
    :parameters (?r - robot ?s - sink ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?s ?room) (faucet-on ?s))
    :effect (not (faucet-on ?s)))

  (:action wash
    :parameters (?r - robot ?d - dish ?s - sink ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?s ?room) (inside ?d ?s) (faucet-on ?s)
                       (dirty ?d))
    :effect (not (dirty ?d)))

  (:action hand-over
    :parameters (?r - robot ?i - item ?p - person ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?p ?room) (holding ?r ?i))
    :effect (and (not (holding ?r ?i)) (hand-empty ?r) (held-by ?i ?p)))

  (:action take-from
    :parameters (?r - robot ?i - item ?p - person ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?p ?room) (held-by ?i ?p) (hand-empty ?r))
    :effect (and (not (held-by ?i ?p)) (not (hand-empty ?r)) (holding ?r ?i)))

  (:action throw-away
    :parameters (?r - robot ?i - item ?t - trashcan ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?t ?room) (holding ?r ?i))
    :effect (and (not (holding ?r ?i)) (hand-empty ?r) (discarded ?i)))

  (:action make-bed
    :parameters (?r - robot ?b - bed ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?b ?room) (hand-empty ?r) (not (made ?b)))
    :effect (made ?b))

  (:action run-washer
    :parameters (?r - robot ?w - washer ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?w ?room) (closed ?w)
                       (exists (?c - clothing) (inside ?c ?w)))
    :effect (forall (?c - clothing)
              (when (inside ?c ?w) (and (not (dirty ?c)) (wet ?c)))))

  (:action run-dryer
    :parameters (?r - robot ?d - dryer ?room - room)
    :precondition (and (in-room ?r ?room) (in-room ?d ?room) (closed ?d)
                       (exists (?c - clothing) (inside ?c ?d)))
    :effect (forall (?c - clothing)
              (when (inside ?c ?d) (not (wet ?c))))))
