"""Integers no float can hold: a line type that reads a 310-digit `max_num_batched_tokens` gives an event the facts
(which compute in floats) cannot use, so the parse counts such a line as not understood."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.events import EventBase

HUGE_NUMBER_DIGITS = 309  # an integer of this many digits or more does not fit a float
HUGE_NUMBER = re.compile(rf"(?:\d[,_]?){{{HUGE_NUMBER_DIGITS}}}")


def too_big(events: list[EventBase]) -> bool:
    """Whether an event carries an integer no float can hold (a 310-digit `max_num_batched_tokens`)."""

    def huge(value: Any) -> bool:
        if isinstance(value, int) and not isinstance(value, bool):
            return value.bit_length() > 1023
        if isinstance(value, dict):
            return any(huge(v) for v in value.values())
        if isinstance(value, list | tuple):
            return any(huge(v) for v in value)
        if isinstance(value, EventBase):
            return any(huge(getattr(value, name)) for name in type(value).model_fields)
        return False

    return any(huge(event) for event in events)
