"""axe-core in the browser tests: a page must have no serious or critical violation.

axe-core comes from npm at setup (``make ui-assets`` installs package-lock.json's packages
into node_modules). The UI's Content Security Policy allows only the server's own scripts,
so axe is not added as a ``<script>`` element (an inline one would be refused): its source
is evaluated through the DevTools protocol, which the page's policy does not govern, and
the page itself stays exactly as strict as users get it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = frozenset({"serious", "critical"})


@cache
def _axe_source() -> str:
    if not AXE.is_file():
        raise AssertionError(
            f"axe-core is not installed at {AXE}: run `make ui-assets` "
            "(npm ci of package-lock.json) before the browser tests"
        )
    return AXE.read_text(encoding="utf-8")


def axe_violations(
    page: Page,
    *,
    include: str | None = None,
    rules: list[str] | None = None,
    failing_only: bool = False,
    also: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (or inside the ``include`` selector),
    of every rule axe runs by default or of ``rules`` only. With ``failing_only``, of the
    default rules that can find a serious or critical violation (``FAILING_IMPACTS``) and
    those named in ``also``: a minor or moderate rule can fail no test that asks only for
    serious ones, and leaving those out spared about a fifth of an axe run of a
    conversation's page."""
    # Let layout settle first: scrollable blocks become tab stops when a resize observer
    # has seen them overflow, which happens with the next frames, not with the content.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # A bare expression is evaluated as a script: axe's UMD wrapper sets window.axe.
        page.evaluate(f"{_axe_source()}\n;undefined")
    if failing_only and rules is None:
        rules = page.evaluate(_FAILING_RULES, [sorted(FAILING_IMPACTS), list(also)])
        # A sanity check of the choice: contrast is a serious rule in every axe release.
        assert rules is None or "color-contrast" in rules, rules
    violations: list[dict[str, Any]] = page.evaluate(
        """async ([include, rules]) => {
            const options = { resultTypes: ["violations"] };
            if (rules) options.runOnly = { type: "rule", values: rules };
            const results = await window.axe.run(
                include ? { include: [include] } : document, options);
            return results.violations.map((v) => ({
                id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
                nodes: v.nodes.map((n) => ({ target: n.target.join(" "), impact: n.impact,
                                             summary: n.failureSummary })),
            }));
        }""",
        [include, rules],
    )
    return violations


_FAILING_RULES = """([failing, also]) => {
    // The rules axe runs by default (enabled, not experimental) whose impact is among
    // ``failing``: the rule's own where it names one (it overrides its checks'), else any
    // of its checks' (a check whose impact is not there to read counts as able to fail).
    // Null, which runs every default rule, where axe's rule table is not there to read.
    const audit = window.axe._audit;
    if (!audit || !Array.isArray(audit.rules)) return null;
    const impact = (check) => {
        const id = typeof check === "string" ? check : check.id;
        return audit.data?.checks?.[id]?.impact ?? audit.checks?.[id]?.metadata?.impact;
    };
    const can = (rule) => rule.impact
        ? failing.includes(rule.impact)
        : [...rule.any, ...rule.all, ...rule.none].map(impact)
            .some((found) => found === undefined || failing.includes(found));
    return audit.rules.filter((rule) => rule.enabled !== false
        && !(rule.tags ?? []).includes("experimental") && (can(rule) || also.includes(rule.id)))
        .map((rule) => rule.id);
}"""


def describe(violations: list[dict[str, Any]]) -> str:
    """One line per offending element: rule, impact, target, what to fix, help URL."""
    lines = []
    for violation in violations:
        for node in violation["nodes"]:
            summary = " ".join(str(node["summary"] or "").split())
            lines.append(
                f"  {violation['id']} ({node['impact'] or violation['impact']}) at "
                f"{node['target']}: {violation['help']}. {summary} <{violation['helpUrl']}>"
            )
    return "\n".join(lines)


def serious_violations(page: Page, *, include: str | None = None) -> list[dict[str, Any]]:
    """The violations whose impact is serious or critical."""
    found = axe_violations(page, include=include, failing_only=True)
    return [v for v in found if v["impact"] in FAILING_IMPACTS]


EMPTY_TABLE_HEADER = "empty-table-header"
"""Column and row headers with no accessible text: a minor rule by axe's grading (a best
practice, which axe runs by default), to which the UI holds every header."""


def serious_and_empty_headers(page: Page) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """From one axe-core run of the default rules that can fail (``axe_violations``'s
    ``failing_only``) and ``EMPTY_TABLE_HEADER``: the serious or critical violations, and
    the empty table headers."""
    found = axe_violations(page, failing_only=True, also=(EMPTY_TABLE_HEADER,))
    serious = [v for v in found if v["impact"] in FAILING_IMPACTS]
    empty = [v for v in found if v["id"] == EMPTY_TABLE_HEADER]
    return serious, empty


def assert_accessible(page: Page, context: str, *, include: str | None = None) -> None:
    """Fail naming every serious or critical axe-core violation (rule, element, help URL).

    ``context`` names what is being checked ("the inbox at 375 px") in the failure message.
    """
    found = serious_violations(page, include=include)
    assert not found, f"{context}: axe-core found serious or critical violations:\n" + describe(
        found
    )
