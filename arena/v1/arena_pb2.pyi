from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Termination(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TERMINATION_UNSPECIFIED: _ClassVar[Termination]
    TERMINATION_NORMAL: _ClassVar[Termination]
    TERMINATION_TIMEOUT: _ClassVar[Termination]
    TERMINATION_ILLEGAL_ACTION: _ClassVar[Termination]
    TERMINATION_DISCONNECT: _ClassVar[Termination]
    TERMINATION_FORFEIT: _ClassVar[Termination]

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_CODE_UNSPECIFIED: _ClassVar[ErrorCode]
    ERROR_CODE_BAD_HELLO: _ClassVar[ErrorCode]
    ERROR_CODE_UNAUTHENTICATED: _ClassVar[ErrorCode]
    ERROR_CODE_UNSUPPORTED_PROTOCOL: _ClassVar[ErrorCode]
    ERROR_CODE_UNKNOWN_REQUEST: _ClassVar[ErrorCode]
    ERROR_CODE_LATE_ANSWER: _ClassVar[ErrorCode]
    ERROR_CODE_ILLEGAL_ACTION: _ClassVar[ErrorCode]
    ERROR_CODE_MALFORMED: _ClassVar[ErrorCode]
    ERROR_CODE_NOT_YOUR_SEAT: _ClassVar[ErrorCode]
    ERROR_CODE_DUPLICATE_ANSWER: _ClassVar[ErrorCode]
    ERROR_CODE_TIMEOUT: _ClassVar[ErrorCode]
    ERROR_CODE_INTERNAL: _ClassVar[ErrorCode]
    ERROR_CODE_RATE_LIMITED: _ClassVar[ErrorCode]
    ERROR_CODE_TOO_MANY_CONNECTIONS: _ClassVar[ErrorCode]
    ERROR_CODE_MESSAGE_TOO_LARGE: _ClassVar[ErrorCode]

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_SWORDS: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]
    SUIT_COINS: _ClassVar[Suit]
    SUIT_CUPS: _ClassVar[Suit]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]
    ACTION_KIND_PLAY_FACE_DOWN: _ClassVar[ActionKind]
    ACTION_KIND_DISCARD: _ClassVar[ActionKind]
    ACTION_KIND_FLOR: _ClassVar[ActionKind]
    ACTION_KIND_ENVIDO: _ClassVar[ActionKind]
    ACTION_KIND_REAL_ENVIDO: _ClassVar[ActionKind]
    ACTION_KIND_FALTA_ENVIDO: _ClassVar[ActionKind]
    ACTION_KIND_TRUCO: _ClassVar[ActionKind]
    ACTION_KIND_RETRUCO: _ClassVar[ActionKind]
    ACTION_KIND_VALE_CUATRO: _ClassVar[ActionKind]
    ACTION_KIND_SIX: _ClassVar[ActionKind]
    ACTION_KIND_TEN: _ClassVar[ActionKind]
    ACTION_KIND_TWELVE: _ClassVar[ActionKind]
    ACTION_KIND_QUIERO: _ClassVar[ActionKind]
    ACTION_KIND_NO_QUIERO: _ClassVar[ActionKind]
    ACTION_KIND_CON_FLOR_QUIERO: _ClassVar[ActionKind]
    ACTION_KIND_CON_FLOR_ME_ACHICO: _ClassVar[ActionKind]
    ACTION_KIND_CONTRAFLOR: _ClassVar[ActionKind]
    ACTION_KIND_CONTRAFLOR_AL_RESTO: _ClassVar[ActionKind]
    ACTION_KIND_ACCEPT: _ClassVar[ActionKind]
    ACTION_KIND_RUN: _ClassVar[ActionKind]
    ACTION_KIND_PLAY_HAND: _ClassVar[ActionKind]
    ACTION_KIND_DECLINE_HAND: _ClassVar[ActionKind]
    ACTION_KIND_FOLD: _ClassVar[ActionKind]

class AwardReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AWARD_REASON_UNSPECIFIED: _ClassVar[AwardReason]
    AWARD_REASON_HAND: _ClassVar[AwardReason]
    AWARD_REASON_TRUCO_REJECTED: _ClassVar[AwardReason]
    AWARD_REASON_FOLD: _ClassVar[AwardReason]
    AWARD_REASON_ENVIDO: _ClassVar[AwardReason]
    AWARD_REASON_ENVIDO_REJECTED: _ClassVar[AwardReason]
    AWARD_REASON_FLOR: _ClassVar[AwardReason]
    AWARD_REASON_HAND_OF_TEN_DECLINED: _ClassVar[AwardReason]
    AWARD_REASON_IRON_HAND: _ClassVar[AwardReason]

class SignalKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIGNAL_KIND_UNSPECIFIED: _ClassVar[SignalKind]
    SIGNAL_KIND_TEXT: _ClassVar[SignalKind]
    SIGNAL_KIND_ANCHO_DE_ESPADA: _ClassVar[SignalKind]
    SIGNAL_KIND_ANCHO_DE_BASTO: _ClassVar[SignalKind]
    SIGNAL_KIND_SIETE_DE_ESPADA: _ClassVar[SignalKind]
    SIGNAL_KIND_SIETE_DE_ORO: _ClassVar[SignalKind]
    SIGNAL_KIND_TRES: _ClassVar[SignalKind]
    SIGNAL_KIND_FLOR: _ClassVar[SignalKind]
    SIGNAL_KIND_ENVIDO: _ClassVar[SignalKind]
    SIGNAL_KIND_NADA: _ClassVar[SignalKind]
TERMINATION_UNSPECIFIED: Termination
TERMINATION_NORMAL: Termination
TERMINATION_TIMEOUT: Termination
TERMINATION_ILLEGAL_ACTION: Termination
TERMINATION_DISCONNECT: Termination
TERMINATION_FORFEIT: Termination
ERROR_CODE_UNSPECIFIED: ErrorCode
ERROR_CODE_BAD_HELLO: ErrorCode
ERROR_CODE_UNAUTHENTICATED: ErrorCode
ERROR_CODE_UNSUPPORTED_PROTOCOL: ErrorCode
ERROR_CODE_UNKNOWN_REQUEST: ErrorCode
ERROR_CODE_LATE_ANSWER: ErrorCode
ERROR_CODE_ILLEGAL_ACTION: ErrorCode
ERROR_CODE_MALFORMED: ErrorCode
ERROR_CODE_NOT_YOUR_SEAT: ErrorCode
ERROR_CODE_DUPLICATE_ANSWER: ErrorCode
ERROR_CODE_TIMEOUT: ErrorCode
ERROR_CODE_INTERNAL: ErrorCode
ERROR_CODE_RATE_LIMITED: ErrorCode
ERROR_CODE_TOO_MANY_CONNECTIONS: ErrorCode
ERROR_CODE_MESSAGE_TOO_LARGE: ErrorCode
SUIT_UNSPECIFIED: Suit
SUIT_SWORDS: Suit
SUIT_CLUBS: Suit
SUIT_COINS: Suit
SUIT_CUPS: Suit
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_PLAY: ActionKind
ACTION_KIND_PLAY_FACE_DOWN: ActionKind
ACTION_KIND_DISCARD: ActionKind
ACTION_KIND_FLOR: ActionKind
ACTION_KIND_ENVIDO: ActionKind
ACTION_KIND_REAL_ENVIDO: ActionKind
ACTION_KIND_FALTA_ENVIDO: ActionKind
ACTION_KIND_TRUCO: ActionKind
ACTION_KIND_RETRUCO: ActionKind
ACTION_KIND_VALE_CUATRO: ActionKind
ACTION_KIND_SIX: ActionKind
ACTION_KIND_TEN: ActionKind
ACTION_KIND_TWELVE: ActionKind
ACTION_KIND_QUIERO: ActionKind
ACTION_KIND_NO_QUIERO: ActionKind
ACTION_KIND_CON_FLOR_QUIERO: ActionKind
ACTION_KIND_CON_FLOR_ME_ACHICO: ActionKind
ACTION_KIND_CONTRAFLOR: ActionKind
ACTION_KIND_CONTRAFLOR_AL_RESTO: ActionKind
ACTION_KIND_ACCEPT: ActionKind
ACTION_KIND_RUN: ActionKind
ACTION_KIND_PLAY_HAND: ActionKind
ACTION_KIND_DECLINE_HAND: ActionKind
ACTION_KIND_FOLD: ActionKind
AWARD_REASON_UNSPECIFIED: AwardReason
AWARD_REASON_HAND: AwardReason
AWARD_REASON_TRUCO_REJECTED: AwardReason
AWARD_REASON_FOLD: AwardReason
AWARD_REASON_ENVIDO: AwardReason
AWARD_REASON_ENVIDO_REJECTED: AwardReason
AWARD_REASON_FLOR: AwardReason
AWARD_REASON_HAND_OF_TEN_DECLINED: AwardReason
AWARD_REASON_IRON_HAND: AwardReason
SIGNAL_KIND_UNSPECIFIED: SignalKind
SIGNAL_KIND_TEXT: SignalKind
SIGNAL_KIND_ANCHO_DE_ESPADA: SignalKind
SIGNAL_KIND_ANCHO_DE_BASTO: SignalKind
SIGNAL_KIND_SIETE_DE_ESPADA: SignalKind
SIGNAL_KIND_SIETE_DE_ORO: SignalKind
SIGNAL_KIND_TRES: SignalKind
SIGNAL_KIND_FLOR: SignalKind
SIGNAL_KIND_ENVIDO: SignalKind
SIGNAL_KIND_NADA: SignalKind

class BotMessage(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("welcome", "game_started", "decision", "event", "hand_ended", "game_over", "error", "batch")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    GAME_STARTED_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    game_started: GameStarted
    decision: DecisionRequest
    event: GameEvent
    hand_ended: HandEnded
    game_over: GameOver
    error: Error
    batch: Batch
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., game_started: _Optional[_Union[GameStarted, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., event: _Optional[_Union[GameEvent, _Mapping]] = ..., hand_ended: _Optional[_Union[HandEnded, _Mapping]] = ..., game_over: _Optional[_Union[GameOver, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., batch: _Optional[_Union[Batch, _Mapping]] = ...) -> None: ...

class Batch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[ServerMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[ServerMessage, _Mapping]]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("bot_name", "bot_version", "token", "protocol_version", "accepts_batches", "protocol_minor")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACCEPTS_BATCHES_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_MINOR_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    bot_version: str
    token: str
    protocol_version: int
    accepts_batches: bool
    protocol_minor: int
    def __init__(self, bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., token: _Optional[str] = ..., protocol_version: _Optional[int] = ..., accepts_batches: _Optional[bool] = ..., protocol_minor: _Optional[int] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("request_id", "match_id", "seat", "action_index", "action", "signal")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    seat: int
    action_index: int
    action: Action
    signal: Signal
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., action_index: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., signal: _Optional[_Union[Signal, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "server_version", "session_id", "protocol_minor")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_MINOR_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    server_version: str
    session_id: str
    protocol_minor: int
    def __init__(self, protocol_version: _Optional[int] = ..., server_version: _Optional[str] = ..., session_id: _Optional[str] = ..., protocol_minor: _Optional[int] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("match_id", "variant", "options", "seat", "team", "seats", "time_control")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    variant: str
    options: Options
    seat: int
    team: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    time_control: TimeControl
    def __init__(self, match_id: _Optional[str] = ..., variant: _Optional[str] = ..., options: _Optional[_Union[Options, _Mapping]] = ..., seat: _Optional[int] = ..., team: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "team", "bot_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    team: int
    bot_name: str
    def __init__(self, seat: _Optional[int] = ..., team: _Optional[int] = ..., bot_name: _Optional[str] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "increment_ms", "grace_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    increment_ms: int
    grace_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., increment_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "match_id", "seat", "view", "legal_actions", "deadline_unix_ms", "time_left_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    seat: int
    view: View
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    deadline_unix_ms: int
    time_left_ms: int
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., view: _Optional[_Union[View, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., deadline_unix_ms: _Optional[int] = ..., time_left_ms: _Optional[int] = ...) -> None: ...

class GameEvent(_message.Message):
    __slots__ = ("match_id", "seat", "move", "trick", "envido", "game_end", "flor", "duel_end", "signal")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    ENVIDO_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    FLOR_FIELD_NUMBER: _ClassVar[int]
    DUEL_END_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    move: MoveEvent
    trick: TrickEvent
    envido: EnvidoEvent
    game_end: GameEndEvent
    flor: FlorEvent
    duel_end: DuelEndEvent
    signal: SignalEvent
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., move: _Optional[_Union[MoveEvent, _Mapping]] = ..., trick: _Optional[_Union[TrickEvent, _Mapping]] = ..., envido: _Optional[_Union[EnvidoEvent, _Mapping]] = ..., game_end: _Optional[_Union[GameEndEvent, _Mapping]] = ..., flor: _Optional[_Union[FlorEvent, _Mapping]] = ..., duel_end: _Optional[_Union[DuelEndEvent, _Mapping]] = ..., signal: _Optional[_Union[SignalEvent, _Mapping]] = ...) -> None: ...

class MoveEvent(_message.Message):
    __slots__ = ("move", "card")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    move: Move
    card: Card
    def __init__(self, move: _Optional[_Union[Move, _Mapping]] = ..., card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class TrickEvent(_message.Message):
    __slots__ = ("index", "trick")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    index: int
    trick: Trick
    def __init__(self, index: _Optional[int] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ...) -> None: ...

class EnvidoEvent(_message.Message):
    __slots__ = ("outcome",)
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    outcome: EnvidoOutcome
    def __init__(self, outcome: _Optional[_Union[EnvidoOutcome, _Mapping]] = ...) -> None: ...

class GameEndEvent(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: GameResult
    def __init__(self, result: _Optional[_Union[GameResult, _Mapping]] = ...) -> None: ...

class HandEnded(_message.Message):
    __slots__ = ("match_id", "seat", "summary")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    summary: HandSummary
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., summary: _Optional[_Union[HandSummary, _Mapping]] = ...) -> None: ...

class GameOver(_message.Message):
    __slots__ = ("match_id", "seat", "outcome")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    outcome: MatchOutcome
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., outcome: _Optional[_Union[MatchOutcome, _Mapping]] = ...) -> None: ...

class MatchOutcome(_message.Message):
    __slots__ = ("termination", "winner_team", "faulty_seat", "detail", "result", "strikes")
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    WINNER_TEAM_FIELD_NUMBER: _ClassVar[int]
    FAULTY_SEAT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    termination: Termination
    winner_team: int
    faulty_seat: int
    detail: str
    result: MatchResult
    strikes: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, termination: _Optional[_Union[Termination, str]] = ..., winner_team: _Optional[int] = ..., faulty_seat: _Optional[int] = ..., detail: _Optional[str] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ..., strikes: _Optional[_Iterable[int]] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("code", "message", "request_id", "match_id", "seat", "detail", "strikes", "max_strikes")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    code: ErrorCode
    message: str
    request_id: str
    match_id: str
    seat: int
    detail: str
    strikes: int
    max_strikes: int
    def __init__(self, code: _Optional[_Union[ErrorCode, str]] = ..., message: _Optional[str] = ..., request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., detail: _Optional[str] = ..., strikes: _Optional[int] = ..., max_strikes: _Optional[int] = ...) -> None: ...

class Card(_message.Message):
    __slots__ = ("suit", "rank", "text")
    SUIT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    suit: Suit
    rank: int
    text: str
    def __init__(self, suit: _Optional[_Union[Suit, str]] = ..., rank: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("kind", "card", "slot")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    kind: ActionKind
    card: Card
    slot: int
    def __init__(self, kind: _Optional[_Union[ActionKind, str]] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., slot: _Optional[int] = ...) -> None: ...

class Award(_message.Message):
    __slots__ = ("team", "points", "reason")
    TEAM_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    team: int
    points: int
    reason: AwardReason
    def __init__(self, team: _Optional[int] = ..., points: _Optional[int] = ..., reason: _Optional[_Union[AwardReason, str]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "plays", "winner", "winner_team")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    WINNER_TEAM_FIELD_NUMBER: _ClassVar[int]
    leader: int
    plays: _containers.RepeatedCompositeFieldContainer[Play]
    winner: int
    winner_team: int
    def __init__(self, leader: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., winner: _Optional[int] = ..., winner_team: _Optional[int] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("seat", "action")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: Action
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class PendingCall(_message.Message):
    __slots__ = ("kind", "caller", "responder")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    RESPONDER_FIELD_NUMBER: _ClassVar[int]
    kind: ActionKind
    caller: int
    responder: int
    def __init__(self, kind: _Optional[_Union[ActionKind, str]] = ..., caller: _Optional[int] = ..., responder: _Optional[int] = ...) -> None: ...

class EnvidoAnnouncement(_message.Message):
    __slots__ = ("seat", "value")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    value: int
    def __init__(self, seat: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...

class EnvidoOutcome(_message.Message):
    __slots__ = ("accepted", "chain", "announcements", "winner", "team", "points")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    CHAIN_FIELD_NUMBER: _ClassVar[int]
    ANNOUNCEMENTS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    accepted: bool
    chain: _containers.RepeatedScalarFieldContainer[ActionKind]
    announcements: _containers.RepeatedCompositeFieldContainer[EnvidoAnnouncement]
    winner: int
    team: int
    points: int
    def __init__(self, accepted: _Optional[bool] = ..., chain: _Optional[_Iterable[_Union[ActionKind, str]]] = ..., announcements: _Optional[_Iterable[_Union[EnvidoAnnouncement, _Mapping]]] = ..., winner: _Optional[int] = ..., team: _Optional[int] = ..., points: _Optional[int] = ...) -> None: ...

class SeatCards(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("variant", "seat", "team", "team_of", "game_number", "hand_number", "dealer", "mano", "scores", "games_won", "target", "hand", "hand_card_count", "partner_cards", "tricks", "current_trick", "moves", "hand_value", "pending", "envido", "folded", "hand_of_ten", "iron_hand", "awards", "to_act", "legal_actions", "side", "side_of", "gallo", "discard", "flor", "duel", "duels", "signals")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    TEAM_OF_FIELD_NUMBER: _ClassVar[int]
    GAME_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    MANO_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    GAMES_WON_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_CARD_COUNT_FIELD_NUMBER: _ClassVar[int]
    PARTNER_CARDS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TRICK_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    HAND_VALUE_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    ENVIDO_FIELD_NUMBER: _ClassVar[int]
    FOLDED_FIELD_NUMBER: _ClassVar[int]
    HAND_OF_TEN_FIELD_NUMBER: _ClassVar[int]
    IRON_HAND_FIELD_NUMBER: _ClassVar[int]
    AWARDS_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    SIDE_OF_FIELD_NUMBER: _ClassVar[int]
    GALLO_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    FLOR_FIELD_NUMBER: _ClassVar[int]
    DUEL_FIELD_NUMBER: _ClassVar[int]
    DUELS_FIELD_NUMBER: _ClassVar[int]
    SIGNALS_FIELD_NUMBER: _ClassVar[int]
    variant: str
    seat: int
    team: int
    team_of: _containers.RepeatedScalarFieldContainer[int]
    game_number: int
    hand_number: int
    dealer: int
    mano: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    games_won: _containers.RepeatedScalarFieldContainer[int]
    target: int
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    hand_card_count: int
    partner_cards: _containers.RepeatedCompositeFieldContainer[SeatCards]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    current_trick: _containers.RepeatedCompositeFieldContainer[Play]
    moves: _containers.RepeatedCompositeFieldContainer[Move]
    hand_value: int
    pending: PendingCall
    envido: EnvidoOutcome
    folded: _containers.RepeatedScalarFieldContainer[int]
    hand_of_ten: int
    iron_hand: bool
    awards: _containers.RepeatedCompositeFieldContainer[Award]
    to_act: int
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    side: int
    side_of: _containers.RepeatedScalarFieldContainer[int]
    gallo: int
    discard: Card
    flor: _containers.RepeatedCompositeFieldContainer[FlorOutcome]
    duel: Duel
    duels: _containers.RepeatedCompositeFieldContainer[DuelSummary]
    signals: _containers.RepeatedCompositeFieldContainer[SeenSignal]
    def __init__(self, variant: _Optional[str] = ..., seat: _Optional[int] = ..., team: _Optional[int] = ..., team_of: _Optional[_Iterable[int]] = ..., game_number: _Optional[int] = ..., hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., mano: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., games_won: _Optional[_Iterable[int]] = ..., target: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hand_card_count: _Optional[int] = ..., partner_cards: _Optional[_Iterable[_Union[SeatCards, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., current_trick: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., moves: _Optional[_Iterable[_Union[Move, _Mapping]]] = ..., hand_value: _Optional[int] = ..., pending: _Optional[_Union[PendingCall, _Mapping]] = ..., envido: _Optional[_Union[EnvidoOutcome, _Mapping]] = ..., folded: _Optional[_Iterable[int]] = ..., hand_of_ten: _Optional[int] = ..., iron_hand: _Optional[bool] = ..., awards: _Optional[_Iterable[_Union[Award, _Mapping]]] = ..., to_act: _Optional[int] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., side: _Optional[int] = ..., side_of: _Optional[_Iterable[int]] = ..., gallo: _Optional[int] = ..., discard: _Optional[_Union[Card, _Mapping]] = ..., flor: _Optional[_Iterable[_Union[FlorOutcome, _Mapping]]] = ..., duel: _Optional[_Union[Duel, _Mapping]] = ..., duels: _Optional[_Iterable[_Union[DuelSummary, _Mapping]]] = ..., signals: _Optional[_Iterable[_Union[SeenSignal, _Mapping]]] = ...) -> None: ...

class HandSummary(_message.Message):
    __slots__ = ("game_number", "hand_number", "dealer", "mano", "tricks", "winner_team", "awards", "revealed", "scores", "ended_by", "flor_revealed", "duels", "gallo")
    GAME_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    MANO_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    WINNER_TEAM_FIELD_NUMBER: _ClassVar[int]
    AWARDS_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ENDED_BY_FIELD_NUMBER: _ClassVar[int]
    FLOR_REVEALED_FIELD_NUMBER: _ClassVar[int]
    DUELS_FIELD_NUMBER: _ClassVar[int]
    GALLO_FIELD_NUMBER: _ClassVar[int]
    game_number: int
    hand_number: int
    dealer: int
    mano: int
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    winner_team: int
    awards: _containers.RepeatedCompositeFieldContainer[Award]
    revealed: _containers.RepeatedCompositeFieldContainer[SeatCards]
    scores: _containers.RepeatedScalarFieldContainer[int]
    ended_by: str
    flor_revealed: _containers.RepeatedCompositeFieldContainer[SeatCards]
    duels: _containers.RepeatedCompositeFieldContainer[DuelSummary]
    gallo: int
    def __init__(self, game_number: _Optional[int] = ..., hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., mano: _Optional[int] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., winner_team: _Optional[int] = ..., awards: _Optional[_Iterable[_Union[Award, _Mapping]]] = ..., revealed: _Optional[_Iterable[_Union[SeatCards, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., ended_by: _Optional[str] = ..., flor_revealed: _Optional[_Iterable[_Union[SeatCards, _Mapping]]] = ..., duels: _Optional[_Iterable[_Union[DuelSummary, _Mapping]]] = ..., gallo: _Optional[int] = ...) -> None: ...

class GameResult(_message.Message):
    __slots__ = ("game_number", "winner_team", "scores")
    GAME_NUMBER_FIELD_NUMBER: _ClassVar[int]
    WINNER_TEAM_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    game_number: int
    winner_team: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game_number: _Optional[int] = ..., winner_team: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("winner_team", "games", "games_won", "points")
    WINNER_TEAM_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    GAMES_WON_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    winner_team: int
    games: _containers.RepeatedCompositeFieldContainer[GameResult]
    games_won: _containers.RepeatedScalarFieldContainer[int]
    points: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, winner_team: _Optional[int] = ..., games: _Optional[_Iterable[_Union[GameResult, _Mapping]]] = ..., games_won: _Optional[_Iterable[int]] = ..., points: _Optional[_Iterable[int]] = ...) -> None: ...

class Options(_message.Message):
    __slots__ = ("target", "chicos", "flor", "blind_iron_hand", "all_tied", "gallo", "pico_until", "signals", "leak")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    CHICOS_FIELD_NUMBER: _ClassVar[int]
    FLOR_FIELD_NUMBER: _ClassVar[int]
    BLIND_IRON_HAND_FIELD_NUMBER: _ClassVar[int]
    ALL_TIED_FIELD_NUMBER: _ClassVar[int]
    GALLO_FIELD_NUMBER: _ClassVar[int]
    PICO_UNTIL_FIELD_NUMBER: _ClassVar[int]
    SIGNALS_FIELD_NUMBER: _ClassVar[int]
    LEAK_FIELD_NUMBER: _ClassVar[int]
    target: int
    chicos: int
    flor: bool
    blind_iron_hand: bool
    all_tied: str
    gallo: str
    pico_until: int
    signals: str
    leak: float
    def __init__(self, target: _Optional[int] = ..., chicos: _Optional[int] = ..., flor: _Optional[bool] = ..., blind_iron_hand: _Optional[bool] = ..., all_tied: _Optional[str] = ..., gallo: _Optional[str] = ..., pico_until: _Optional[int] = ..., signals: _Optional[str] = ..., leak: _Optional[float] = ...) -> None: ...

class FlorOutcome(_message.Message):
    __slots__ = ("chain", "singer", "winner", "team", "points")
    CHAIN_FIELD_NUMBER: _ClassVar[int]
    SINGER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    chain: _containers.RepeatedScalarFieldContainer[ActionKind]
    singer: int
    winner: int
    team: int
    points: int
    def __init__(self, chain: _Optional[_Iterable[_Union[ActionKind, str]]] = ..., singer: _Optional[int] = ..., winner: _Optional[int] = ..., team: _Optional[int] = ..., points: _Optional[int] = ...) -> None: ...

class FlorEvent(_message.Message):
    __slots__ = ("outcome",)
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    outcome: FlorOutcome
    def __init__(self, outcome: _Optional[_Union[FlorOutcome, _Mapping]] = ...) -> None: ...

class Duel(_message.Message):
    __slots__ = ("index", "of", "seats")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    OF_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    index: int
    of: int
    seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, index: _Optional[int] = ..., of: _Optional[int] = ..., seats: _Optional[_Iterable[int]] = ...) -> None: ...

class DuelSummary(_message.Message):
    __slots__ = ("duel", "tricks", "winner_team", "awards", "ended_by")
    DUEL_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    WINNER_TEAM_FIELD_NUMBER: _ClassVar[int]
    AWARDS_FIELD_NUMBER: _ClassVar[int]
    ENDED_BY_FIELD_NUMBER: _ClassVar[int]
    duel: Duel
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    winner_team: int
    awards: _containers.RepeatedCompositeFieldContainer[Award]
    ended_by: str
    def __init__(self, duel: _Optional[_Union[Duel, _Mapping]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., winner_team: _Optional[int] = ..., awards: _Optional[_Iterable[_Union[Award, _Mapping]]] = ..., ended_by: _Optional[str] = ...) -> None: ...

class DuelEndEvent(_message.Message):
    __slots__ = ("summary",)
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summary: DuelSummary
    def __init__(self, summary: _Optional[_Union[DuelSummary, _Mapping]] = ...) -> None: ...

class Signal(_message.Message):
    __slots__ = ("kind", "text", "value")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    kind: SignalKind
    text: str
    value: int
    def __init__(self, kind: _Optional[_Union[SignalKind, str]] = ..., text: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...

class SeenSignal(_message.Message):
    __slots__ = ("seat", "move", "signal")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    move: int
    signal: Signal
    def __init__(self, seat: _Optional[int] = ..., move: _Optional[int] = ..., signal: _Optional[_Union[Signal, _Mapping]] = ...) -> None: ...

class SignalEvent(_message.Message):
    __slots__ = ("seat", "move", "signal")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    move: int
    signal: Signal
    def __init__(self, seat: _Optional[int] = ..., move: _Optional[int] = ..., signal: _Optional[_Union[Signal, _Mapping]] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "delay_s")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    DELAY_S_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[LiveMatch]
    delay_s: float
    def __init__(self, matches: _Optional[_Iterable[_Union[LiveMatch, _Mapping]]] = ..., delay_s: _Optional[float] = ...) -> None: ...

class LiveMatch(_message.Message):
    __slots__ = ("match_id", "variant", "bots", "team_of")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    TEAM_OF_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    variant: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    team_of: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, match_id: _Optional[str] = ..., variant: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., team_of: _Optional[_Iterable[int]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("token", "match_id")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    token: str
    match_id: str
    def __init__(self, token: _Optional[str] = ..., match_id: _Optional[str] = ...) -> None: ...

class SpectatorUpdate(_message.Message):
    __slots__ = ("match", "step", "table", "held", "ended", "result")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    match: LiveMatch
    step: int
    table: View
    held: _containers.RepeatedScalarFieldContainer[int]
    ended: bool
    result: MatchResult
    def __init__(self, match: _Optional[_Union[LiveMatch, _Mapping]] = ..., step: _Optional[int] = ..., table: _Optional[_Union[View, _Mapping]] = ..., held: _Optional[_Iterable[int]] = ..., ended: _Optional[bool] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...
