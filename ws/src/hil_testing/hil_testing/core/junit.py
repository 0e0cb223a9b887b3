"""JUnit XML of scenario runs, for CI servers (Jenkins, GitLab, GitHub test reporters).

One ``<testsuite>`` per scenario, one ``<testcase>`` per assertion (and per timeline
goto); a failed assertion is a ``<failure>``, an assertion the run did not reach the
end of (it could not start, failed or was stopped) an ``<error>``. Each case names
the simulated span its verdict covers in its text and as the property ``span_s``.
The common subset of the Ant JUnit schema that every reader takes:
``testsuites/testsuite[@name,@tests,@failures,@errors,@time]/testcase[@classname,@name,@time]``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class CaseResult:
    """One assertion's outcome."""

    name: str
    passed: bool
    detail: str = ""
    #: The case could not be judged because the run failed (an error, not a failure).
    error: bool = False
    #: The simulated interval (s) its verdict covers; None: nothing of what it needs.
    span: tuple[float, float] | None = None

    @property
    def verdict(self) -> str:
        """``PASS``, ``FAIL`` or ``ERROR``."""
        return "PASS" if self.passed else ("ERROR" if self.error else "FAIL")

    @property
    def text(self) -> str:
        """The detail and the span it covers."""
        span = self.span
        covered = "nothing simulated" if span is None else f"[{span[0]:.3f}, {span[1]:.3f}] s simulated"
        return f"{self.detail} ({covered})"


@dataclass(frozen=True)
class SuiteResult:
    """One scenario's outcome."""

    name: str
    wall_time: float
    cases: Sequence[CaseResult]
    #: Printed output worth keeping beside the result (e.g. where the run report is).
    system_out: str = ""
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def failures(self) -> int:
        """Cases that ran and failed."""
        return sum(1 for c in self.cases if not c.passed and not c.error)

    @property
    def errors(self) -> int:
        """Cases that could not be judged."""
        return sum(1 for c in self.cases if c.error)

    @property
    def passed(self) -> bool:
        """Every case passed."""
        return all(c.passed for c in self.cases)

    @property
    def verdict(self) -> str:
        """``PASS``; ``ERROR`` if a case is one; else ``FAIL``."""
        return "PASS" if self.passed else ("ERROR" if self.errors else "FAIL")


def junit_xml(suites: Sequence[SuiteResult], *, name: str = "hil_scenario") -> str:
    """The JUnit XML document of ``suites``."""
    root = ET.Element(
        "testsuites",
        name=name,
        tests=str(sum(len(s.cases) for s in suites)),
        failures=str(sum(s.failures for s in suites)),
        errors=str(sum(s.errors for s in suites)),
        time=f"{sum(s.wall_time for s in suites):.3f}",
    )
    for suite in suites:
        element = ET.SubElement(
            root,
            "testsuite",
            name=suite.name,
            tests=str(len(suite.cases)),
            failures=str(suite.failures),
            errors=str(suite.errors),
            skipped="0",
            time=f"{suite.wall_time:.3f}",
        )
        if suite.properties:
            properties = ET.SubElement(element, "properties")
            for key, value in suite.properties.items():
                ET.SubElement(properties, "property", name=key, value=value)
        for case in suite.cases:
            # The suite's time is the run's; cases are judged on the same run, not timed apart.
            testcase = ET.SubElement(element, "testcase", classname=suite.name, name=case.name, time="0")
            span = "" if case.span is None else f"{case.span[0]:.3f} {case.span[1]:.3f}"
            ET.SubElement(ET.SubElement(testcase, "properties"), "property", name="span_s", value=span)
            if case.error:
                ET.SubElement(testcase, "error", message=case.text).text = case.text
            elif not case.passed:
                ET.SubElement(testcase, "failure", message=case.text).text = case.text
            else:
                ET.SubElement(testcase, "system-out").text = case.text
        if suite.system_out:
            ET.SubElement(element, "system-out").text = suite.system_out
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(suites: Sequence[SuiteResult], path: Path, *, name: str = "hil_scenario") -> Path:
    """Write :func:`junit_xml` to ``path`` (folders made); returns it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(suites, name=name))
    return path
