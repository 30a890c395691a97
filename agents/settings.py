"""The one ``Settings`` object read once in ``main()`` and passed down: the streams layer's
settings (``streams.settings.Settings``) plus the LLM seam's ``llm`` section.

Environment names (prefix ``JUDGEFLOW_``, nested groups joined with ``__``) are part of the
interface: operators and deploy manifests set them. See docs/configuration.md.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from agents.chart_tool_settings import ChartToolsSettings
from agents.providers.settings import LLMSettings
from streams.settings import Settings as StreamsSettings
from streams.settings import comma_list


class Settings(StreamsSettings):
    llm: LLMSettings = Field(default_factory=LLMSettings)
    #: the judge's note tools and their per-cell budget (agents/chart_tool_settings.py)
    chart_tools: ChartToolsSettings = Field(default_factory=ChartToolsSettings)

    #: The simulator's case catalogue (comma-separated case ids): the debrief worker
    #: dead-letters a request for any other case as ``unknown_case`` before grading it.
    #: Empty (the default): every case is graded.
    debrief_cases: Annotated[tuple[str, ...], NoDecode] = ()

    def open_admission(self, worker: str) -> str | None:
        """The start-up WARNING of a worker that pays for any input (no source in the
        deployment says which tasks or cases are real, so the default cannot narrow it):
        ``None`` when its list is set."""
        if worker == "judge" and not self.tasks:
            return ("JUDGEFLOW_TASKS is empty: jobs of every task are judged and paid for; "
                    "set it to the task ids judged here (docs/configuration.md)")
        if worker == "debrief" and not self.debrief_cases:
            return ("JUDGEFLOW_DEBRIEF_CASES is empty: requests for every case are graded "
                    "and paid for; set it to the simulator's case ids (docs/configuration.md)")
        return None

    @field_validator("debrief_cases", mode="before")
    @classmethod
    def _split_cases(cls, value: object) -> object:
        return comma_list(value)
