"""When the judge gets the chart tools, and the per-cell budget (``JUDGEFLOW_CHART_TOOLS__*``).

``mode`` is the global default and ``criteria`` overrides it per criterion (JSON:
``{"hba1c_ge_9": "on"}``): ``off`` never offers the tools (one call, as before), ``on``
always, ``auto`` only when the assembled context left something out (a relevant note that
did not fit, a note shown only in windows) or an agent cited a note that does not exist.
The budget bounds one cell: tool calls, characters of note text returned, tokens and USD
of the whole conversation; past any of them the judge is told to answer with what it has.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from streams.settings_rules import SettingsModel

Mode = Literal["off", "auto", "on"]


class ChartToolsSettings(SettingsModel):
    model_config = {"extra": "forbid"}

    mode: Mode = "off"
    criteria: dict[str, Mode] = Field(default_factory=dict)
    max_calls: int = Field(default=8, ge=1, le=50)
    max_chars: int = Field(default=24_000, ge=1000)
    max_tokens: int = Field(default=200_000, ge=1000)
    max_usd: float = Field(default=0.50, gt=0)

    def mode_for(self, field_id: str) -> Mode:
        return self.criteria.get(field_id, self.mode)
