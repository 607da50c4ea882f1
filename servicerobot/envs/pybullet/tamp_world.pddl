;; The PyBullet TAMP world of servicerobot: a mobile robot with attach-grasp in a multi-room apartment.
;; Places are cells of a 0.5 m lattice of free floor (the places layer of a 3D scene graph); `move` drives
;; between any two places along a path found by A* over the places graph, `goto` drives to the place from
;; which a piece of furniture or a floor item is approached. Every predicate is unary or binary, so every
;; fact is one knowledge-graph triplet.
(define (domain tamp-world)
  (:requirements :strips :typing :negative-preconditions :disjunctive-preconditions
                 :existential-preconditions :conditional-effects)
  (:types
    room place locatable - object
    robot furniture item - locatable
    mug cube box - item)

  (:predicates
    (in-room ?x - locatable ?r - room)      ; the robot, furniture (static) and items standing on the floor
    (place-in ?p - place ?r - room)         ; static
    (at-place ?r - robot ?p - place)
    (reach ?p - place ?x - locatable)       ; static: from ?p the robot reaches furniture or a floor item
    (approach ?p - place ?x - locatable)    ; static: the one place `goto` drives to for ?x
    (guards ?i - item ?p - place)           ; static: ?p is too close to ?i to pass while ?i is not safe
    (item-on ?i - item ?f - furniture)
    (holding ?r - robot ?i - item)
    (hand-empty ?r - robot)
    (graspable ?i - item)                   ; static
    (suspicious ?i - item)                  ; static: the item must be inspected before it is passed
    (safe ?i - item)                        ; the item was inspected
    (visited ?p - place))

  (:action move
    :parameters (?r - robot ?from - place ?to - place)
    :precondition (and (at-place ?r ?from)
                       (not (exists (?i - item) (and (guards ?i ?to) (suspicious ?i) (not (safe ?i))))))
    :effect (and (not (at-place ?r ?from)) (at-place ?r ?to) (visited ?to)
                 (forall (?rm - room) (when (in-room ?r ?rm) (not (in-room ?r ?rm))))
                 (forall (?rm - room) (when (place-in ?to ?rm) (in-room ?r ?rm)))))

  (:action goto
    :parameters (?r - robot ?x - locatable)
    :precondition (and (exists (?p - place) (approach ?p ?x))
                       (not (exists (?p - place ?i - item)
                              (and (approach ?p ?x) (guards ?i ?p) (suspicious ?i) (not (safe ?i))))))
    :effect (and (forall (?p - place) (when (at-place ?r ?p) (not (at-place ?r ?p))))
                 (forall (?p - place) (when (approach ?p ?x) (and (at-place ?r ?p) (visited ?p))))
                 (forall (?rm - room) (when (in-room ?r ?rm) (not (in-room ?r ?rm))))
                 (forall (?p - place ?rm - room)
                   (when (and (approach ?p ?x) (place-in ?p ?rm)) (in-room ?r ?rm)))))

  (:action inspect
    :parameters (?r - robot ?i - item)
    :precondition (and (suspicious ?i) (exists (?p - place) (and (at-place ?r ?p) (reach ?p ?i))))
    :effect (safe ?i))

  (:action pick
    :parameters (?r - robot ?i - item ?f - furniture)
    :precondition (and (hand-empty ?r) (item-on ?i ?f) (graspable ?i)
                       (or (not (suspicious ?i)) (safe ?i))
                       (exists (?p - place) (and (at-place ?r ?p) (reach ?p ?f))))
    :effect (and (not (item-on ?i ?f)) (not (hand-empty ?r)) (holding ?r ?i)))

  (:action place
    :parameters (?r - robot ?i - item ?f - furniture)
    :precondition (and (holding ?r ?i) (exists (?p - place) (and (at-place ?r ?p) (reach ?p ?f))))
    :effect (and (not (holding ?r ?i)) (hand-empty ?r) (item-on ?i ?f))))
