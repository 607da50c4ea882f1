"""Scene data: generated homes and the PDDL domains shipped with the package."""

from servicerobot.scenes.household import (
    PRESETS,
    ROBOT,
    Entity,
    HouseholdConfig,
    HouseholdScene,
    Room,
    generate_household,
    household_domain,
    household_domain_text,
)

__all__ = ["PRESETS", "ROBOT", "Entity", "HouseholdConfig", "HouseholdScene", "Room", "generate_household",
           "household_domain", "household_domain_text"]
