"""Variants are data plus a registry keyed by name (RULES.md §4.7, §5).

A `Variant` is the static game: family, deck, number of seats, teams, and the options it
accepts. `find_variant(name)` looks one up; `variant.options(...)` validates options and fills
in defaults. Unknown names and options fail with an error that lists the valid ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from arena.errors import UnknownVariantError
from arena.rules.cards import Deck

ARGENTINE: Final = "argentine"
MINEIRO: Final = "mineiro"


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option of a variant: its default, the values it allows, and what it means."""

    name: str
    default: Any
    choices: tuple[Any, ...]
    doc: str


@dataclass(frozen=True, slots=True)
class Options:
    """Resolved options of a match (every field has a value; unused ones keep defaults)."""

    target: int = 30  # Argentine: points to win a chico (30 or 15); Mineiro: 12
    chicos: int = 3  # Argentine: best of three chicos (3) or one chico (1)
    flor: bool = False  # Argentine: play with flor (RULES.md §4.5)
    blind_iron_hand: bool = False  # Mineiro: iron hand played face down (RULES.md §5.3)
    all_tied: str = "dealer"  # Mineiro: three tied tricks go to the dealer's side or nobody
    gallo: str = "rotating"  # argentine-gallo: "rotating" (the dealer) or "fixed" (seat 0)
    pico_until: int = 25  # argentine-3v3/4v4: pico a pico hands stop once a side has this
    signals: str = "team"  # "team" (partners only), "leaky" (opponents may catch), "off"
    leak: float = 0.25  # with signals "leaky": the chance each opponent sees each signal

    def as_dict(self) -> dict[str, Any]:
        """The options as plain data (for configs, records and the wire)."""
        return {
            "target": self.target,
            "chicos": self.chicos,
            "flor": self.flor,
            "blind_iron_hand": self.blind_iron_hand,
            "all_tied": self.all_tied,
            "gallo": self.gallo,
            "pico_until": self.pico_until,
            "signals": self.signals,
            "leak": self.leak,
        }


_SIGNAL_OPTIONS = (
    OptionSpec(
        "signals",
        "team",
        ("team", "leaky", "off"),
        "signals to partners; leaky: opponents may catch them; off: none (RULES.md §4.9)",
    ),
    OptionSpec(
        "leak",
        0.25,
        (0.1, 0.25, 0.5),
        "with signals = leaky, the chance each opponent sees each signal (RULES.md §4.9)",
    ),
)
_CHICO_OPTIONS = (
    OptionSpec("target", 30, (30, 15), "points to win a chico (RULES.md §4.1)"),
    OptionSpec("chicos", 3, (3, 1), "best of three chicos, or one chico (RULES.md §4.1)"),
)
_FLOR_OPTION = OptionSpec("flor", False, (False, True), "play with flor (RULES.md §4.5)")
_ARGENTINE_OPTIONS = (*_CHICO_OPTIONS, _FLOR_OPTION, *_SIGNAL_OPTIONS)
_GALLO_OPTIONS = (
    *_ARGENTINE_OPTIONS[:3],
    OptionSpec(
        "gallo",
        "rotating",
        ("rotating", "fixed"),
        "rotating: the dealer is the gallo, three scores; fixed: seat 0 always (RULES.md §4.7)",
    ),
    *_SIGNAL_OPTIONS,
)
_TEAMS_OPTIONS = (
    *_ARGENTINE_OPTIONS[:3],
    OptionSpec(
        "pico_until",
        25,
        (25, 15),
        "pico a pico hands stop once a side reaches this score (RULES.md §4.7)",
    ),
    *_SIGNAL_OPTIONS,
)
_MINEIRO_OPTIONS = (
    OptionSpec(
        "blind_iron_hand", False, (False, True), "iron hand played face down (RULES.md §5.3)"
    ),
    OptionSpec(
        "all_tied",
        "dealer",
        ("dealer", "nobody"),
        "who wins a hand of three tied tricks (RULES.md §3, Mineiro)",
    ),
    *_SIGNAL_OPTIONS,
)

TEAMS: Final = "teams"  # two teams, seat % 2
GALLO: Final = "gallo"  # one player (the gallo) against the other two (RULES.md §4.7)


@dataclass(frozen=True, slots=True)
class Variant:
    """The static game: who sits where, which deck, which options.

    `team_of` is each seat's scoring account with the default options (RULES.md §1: seat % 2
    in team games); `accounts(options)` gives it for any options (argentine-gallo's depend on
    the gallo option, docs/RULINGS.md R4). `seating` is TEAMS or GALLO; `pico` says whether
    hands alternate redondo / pico a pico (argentine-3v3, argentine-4v4).
    """

    name: str
    family: str
    num_seats: int
    team_of: tuple[int, ...]
    deck: Deck
    option_specs: tuple[OptionSpec, ...]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    seating: str = TEAMS
    pico: bool = False

    @property
    def num_teams(self) -> int:
        return max(self.team_of) + 1

    def accounts(self, options: Options) -> tuple[int, ...]:
        """Each seat's scoring account under `options` (docs/RULINGS.md R4): seat % 2 in team
        games; in argentine-gallo (0, 1, 1) with a fixed gallo (seat 0 against the pair) and
        (0, 1, 2) with a rotating one (three individual scores)."""
        if self.seating == GALLO:
            return (0, 1, 1) if options.gallo == "fixed" else (0, 1, 2)
        return self.team_of

    def options(self, given: Mapping[str, Any] | None = None) -> Options:
        """Validate `given` against this variant's options; fill in the defaults."""
        values: dict[str, Any] = {spec.name: spec.default for spec in self.option_specs}
        specs = {spec.name: spec for spec in self.option_specs}
        for key, value in (given or {}).items():
            spec = specs.get(key)
            if spec is None:
                valid = ", ".join(specs) or "none"
                raise UnknownVariantError(
                    f"variant {self.name!r} has no option {key!r}; its options are: {valid}"
                )
            if value not in spec.choices or type(value) is not type(spec.default):
                allowed = ", ".join(repr(c) for c in spec.choices)
                raise UnknownVariantError(
                    f"variant {self.name!r}: option {key!r} cannot be {value!r}; "
                    f"allowed: {allowed}"
                )
            values[key] = value
        values.update(self.fixed)
        return Options(**values)


_REGISTRY: Final[dict[str, Variant]] = {}


def register(variant: Variant) -> Variant:
    """Add a variant to the registry (names are unique)."""
    if variant.name in _REGISTRY:
        raise ValueError(f"variant {variant.name!r} is already registered")
    _REGISTRY[variant.name] = variant
    return variant


def find_variant(name: str) -> Variant:
    """The variant called `name`, or an error listing every valid name."""
    try:
        return _REGISTRY[name]
    except KeyError:
        valid = ", ".join(_REGISTRY)
        raise UnknownVariantError(
            f"unknown variant {name!r}; valid variants are: {valid}"
        ) from None


def variant_names() -> tuple[str, ...]:
    """Every registered variant, in registration order."""
    return tuple(_REGISTRY)


VARIANTS: Final[Mapping[str, Variant]] = MappingProxyType(_REGISTRY)


def _two_teams(seats: int) -> tuple[int, ...]:
    return tuple(seat % 2 for seat in range(seats))


register(
    Variant(
        "argentine-1v1", ARGENTINE, 2, _two_teams(2), Deck.SPANISH, _ARGENTINE_OPTIONS,
        description="Argentine Truco (flor optional, off by default), two players",
    )
)
register(
    Variant(
        "argentine-2v2", ARGENTINE, 4, _two_teams(4), Deck.SPANISH, _ARGENTINE_OPTIONS,
        description="Argentine Truco (flor optional, off by default), two teams of two",
    )
)
register(
    Variant(
        "argentine-2v2-flor", ARGENTINE, 4, _two_teams(4), Deck.SPANISH,
        (*_CHICO_OPTIONS, *_SIGNAL_OPTIONS), fixed={"flor": True},
        description="Argentine Truco with flor, two teams of two",
    )
)
register(
    Variant(
        "argentine-gallo", ARGENTINE, 3, (0, 1, 2), Deck.SPANISH, _GALLO_OPTIONS,
        seating=GALLO,
        description="Argentine Truco for three: the gallo (4 cards, discards 1) against a pair",
    )
)
register(
    Variant(
        "argentine-3v3", ARGENTINE, 6, _two_teams(6), Deck.SPANISH, _TEAMS_OPTIONS, pico=True,
        description="Argentine Truco, two teams of three, redondo and pico a pico hands",
    )
)
register(
    Variant(
        "argentine-4v4", ARGENTINE, 8, _two_teams(8), Deck.SPANISH, _TEAMS_OPTIONS, pico=True,
        description="Argentine Truco, two teams of four, redondo and pico a pico hands",
    )
)
register(
    Variant(
        "mineiro-1v1", MINEIRO, 2, _two_teams(2), Deck.BRAZILIAN, _MINEIRO_OPTIONS,
        fixed={"target": 12, "chicos": 1},
        description="Truco Mineiro, two players, game to 12",
    )
)
register(
    Variant(
        "mineiro-2v2", MINEIRO, 4, _two_teams(4), Deck.BRAZILIAN, _MINEIRO_OPTIONS,
        fixed={"target": 12, "chicos": 1},
        description="Truco Mineiro, two teams of two, game to 12",
    )
)
