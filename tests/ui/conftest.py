"""Browser tests: Playwright driving Debian's Chromium against ``proctor serve`` on loopback.

The store is seeded once per test process (the bundled examples ingested, the rules run, a
structural review published, and a transcript carrying script-injection payloads). A module
whose tests change the store gets its own copy and its own server (``server``, started
while the module before it ran: ``SpareServers``); the modules that only read share one
server per process (``read_only_server``), which fails the module whose tests changed its
store after all. Screenshots go to ``$PROCTOR_SCREENSHOTS``
(default ``build/screenshots``), the test run's artifacts.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    Dialog,
    Page,
    Playwright,
    ViewportSize,
    expect,
    sync_playwright,
)

from proctor.ingest import ingest
from proctor.notify import settle_pending
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from proctor.supervision import check_conversations
from tests.backends import copy_database
from tests.conftest import EXAMPLES_DIR
from tests.server_zygote import forked_serving
from tests.ui.private_server import Served, serve_copy, served_at, server_command

HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
"""Debian's chromium-headless-shell: the same Chromium release as the chromium package (the
same Blink, V8 and network stack; a ``HeadlessChrome`` user agent too), built as Chromium's
headless shell, the build Playwright itself runs for headless tests since 1.49. It has no
browser window layer to drive behind the pages: the browser tests cost about a fifth less
CPU with it than with the full browser in its headless mode (measured on test_graph and
test_findings_stream: Chromium's processes 28 -> 20 CPU s, its browser process 8 -> 4)."""
CHROMIUM = os.environ.get("PROCTOR_CHROMIUM") or (
    HEADLESS_SHELL if Path(HEADLESS_SHELL).is_file() else "/usr/bin/chromium"
)
"""The Chromium the browser tests drive: ``$PROCTOR_CHROMIUM``, else the headless shell
where it is installed, else Debian's full chromium package in its headless mode."""
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
"""The features Playwright's own ``--disable-features`` turns off (its chromiumSwitches):
Chromium reads the last ``--disable-features`` only, so one of ours repeats them (the
``browser`` fixture launches again with any that Playwright turns off and this lacks)."""
OMNIBOX_POPUP_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup")
"""Chromium's address-bar popup, a web page of its own: every new context (a window, to
headless Chromium) started a renderer for it, about half a second of CPU that no test uses."""
RENDER_DOCUMENT_FEATURES = ("RenderDocument",)
"""Chromium's RenderDocument builds a new frame host (and the renderer's frame, widget and
compositor for it) for every document a page navigates to, instead of reusing the page's
own: an internal arrangement no page can observe (same process, same document lifecycle,
same events). Every test navigates (and each reset between tests goes to about:blank):
without it a navigation cost a third less CPU, about a third less in the renderer
(measured with Chromium 156: an about:blank and a same-origin page, 170 -> 110 ms)."""
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Keyboard and wheel scrolls jump instead of animating. Under load (a 2-CPU machine
    # running the suite on every core) Chromium lost the animated scroll that a key press
    # started: a focused code block's first PageDown left it unscrolled, the second
    # scrolled it (seen with the renderer slowed twentyfold: lost within four tries, never
    # in fourteen without the animation). What the page does with the key is the same.
    "--disable-smooth-scrolling",
    "--disable-features="
    + ",".join(PLAYWRIGHT_DISABLED_FEATURES + OMNIBOX_POPUP_FEATURES + RENDER_DOCUMENT_FEATURES),
]
SCREENSHOTS = Path(os.environ.get("PROCTOR_SCREENSHOTS", "build/screenshots"))
DESKTOP: ViewportSize = {"width": 1280, "height": 860}
PHONE: ViewportSize = {"width": 375, "height": 760}
XSS_TRANSCRIPT = Path(__file__).parent / "fixtures" / "xss.jsonl"
TIMEOUT_MS = 20_000
"""Generous: CI machines have 2 CPUs, and auto-waiting returns as soon as the page is ready."""

expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="session")
def seeded_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Examples plus the hostile transcript, checked, app on, one structural review."""
    path = tmp_path_factory.mktemp("ui-seed") / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [EXAMPLES_DIR, XSS_TRANSCRIPT])
        rows = store.list_conversations(include_children=True)
        check_conversations(
            store,
            [r.conversation_id for r in rows if r.conversation.parent_conversation_id is None],
        )
        # As `proctor check` leaves a store (hand_off_webhooks): no webhook is configured, so
        # each server's delivery pass finds nothing pending and never loads the policies.
        assert settle_pending(store) == 0
        store.set_setting("app.enabled", True)
        start_review(store, ReviewRequest(), semantic=None)
    finally:
        store.close()
    return path


class SpareServers:
    """Servers on private copies of the seeded store, each started while the module before
    it runs: a module takes one that already listens instead of waiting for a new server to
    import the app (a second or more of the module's setup, while this process idles).

    Each is a fresh copy that nothing has asked anything of until a module takes it; the
    copy and the server's environment are made in this thread (they note the store use of
    the test being set up, ``tests/store_use.py``), only the start and the wait for the
    port in the background. The first starts with the first browser module (``module_page``);
    one is left over when the modules leave the package, and stopped then.
    """

    def __init__(self, seed: Path, homes: pytest.TempPathFactory) -> None:
        self._seed = seed
        self._homes = homes
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ui-spare-server")
        self._next: Future[tuple[ExitStack, Served]] | None = None

    def _prepare(self) -> Future[tuple[ExitStack, Served]]:
        home = self._homes.mktemp("ui-home")
        copy_database(self._seed, home / "proctor.db")
        command, env, port = server_command(home)
        return self._starter.submit(self._start, command, env, port, served_at(home, port))

    @staticmethod
    def _start(
        command: list[str], env: dict[str, str], port: int, served: Served
    ) -> tuple[ExitStack, Served]:
        running = ExitStack()
        running.enter_context(forked_serving(command, env, port))  # stops it if it does not listen
        return running, served

    @contextmanager
    def take(self, more_to_come: bool = True) -> Iterator[Served]:
        """A listening server on a fresh copy of the seeded store, for the block; the next
        one starts meanwhile unless no later test asks for one (``more_to_come``)."""
        taken = self._next if self._next is not None else self._prepare()
        self._next = self._prepare() if more_to_come else None
        running, served = taken.result()
        with running:
            yield served

    def start_one(self) -> None:
        """Start a spare now unless one is on its way (for a module that comes later)."""
        if self._next is None:
            self._next = self._prepare()

    def close(self) -> None:
        """Stop the spare nobody took."""
        left, self._next = self._next, None
        try:
            if left is not None:
                running, _ = left.result()
                running.close()
        finally:
            self._starter.shutdown()


@pytest.fixture(scope="package")
def spare_servers(
    seeded_database: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SpareServers]:
    """The browser modules' private servers on copies of the seeded store (``SpareServers``)."""
    spares = SpareServers(seeded_database, tmp_path_factory)
    try:
        yield spares
    finally:
        spares.close()


@pytest.fixture(scope="module")
def served_copy(spare_servers: SpareServers, request: pytest.FixtureRequest) -> Iterator[Served]:
    """``proctor serve`` on a private copy of the seeded store, for the module."""
    with spare_servers.take(_asked_for_later("served_copy", request)) as served:
        yield served


def _asked_for_later(fixture: str, request: pytest.FixtureRequest) -> bool:
    """Whether a test after the requesting module's asks for ``fixture``: in a serial run,
    whether one will; under pytest-xdist, a worker knows only what the suite holds."""
    items = request.session.items
    module = request.node.path
    mine = [index for index, item in enumerate(items) if item.path == module]
    later = items[max(mine) + 1 :] if mine else items
    return any(fixture in getattr(item, "fixturenames", ()) for item in later)


@pytest.fixture(scope="module")
def server(served_copy: Served) -> str:
    """The module's private server (``served_copy``): its base URL."""
    return served_copy.url


@pytest.fixture(scope="session")
def read_only_served(
    seeded_database: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """One ``proctor serve`` on a copy of the seeded store, for every module that only reads."""
    with serve_copy(seeded_database, tmp_path_factory.mktemp("ui-read-only-home")) as served:
        yield served


@pytest.fixture(scope="module")
def read_only_server(read_only_served: Served) -> Iterator[str]:
    """The shared server's URL, for a module that overrides ``server`` with it because its
    tests change nothing the server stores; the module fails if they did, since the next
    module to read would see its changes (checked where the store is a SQLite file)."""
    before = stored_rows(read_only_served.database)
    yield read_only_served.url
    after = stored_rows(read_only_served.database)
    changed = {
        table: sorted(before.get(table, frozenset()) ^ after.get(table, frozenset()))[:4]
        for table in before.keys() | after.keys()
        if before.get(table) != after.get(table)
    }
    assert not changed, (
        "a module on the shared read-only server changed the store; give it its own server "
        f"(the module-scoped ``server`` fixture). Rows added or removed: {changed}"
    )


SERVER_HOUSEKEEPING = ("webhook_",)
"""Columns the server writes on its own whatever its clients do: its webhook delivery pass
(two seconds after it starts) records an outcome for every pending notification."""


def stored_rows(database: Path) -> dict[str, frozenset[str]]:
    """Each table's rows in a SQLite store file, less ``SERVER_HOUSEKEEPING`` (none when the
    store is not a file, as on PostgreSQL)."""
    if not database.is_file():
        return {}
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        rows: dict[str, frozenset[str]] = {}
        for table in tables:
            columns = ", ".join(
                f'"{name}"'
                for (_, name, *_) in connection.execute(f'PRAGMA table_info("{table}")')
                if not name.startswith(SERVER_HOUSEKEEPING)
            )
            query = f'SELECT {columns} FROM "{table}"'
            rows[table] = frozenset(repr(row) for row in connection.execute(query))
        return rows
    finally:
        connection.close()


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    """Playwright's sync driver, for the browser modules a worker runs one after another
    (``tests/conftest.py`` puts them together): while it runs, its event loop is this
    thread's running loop, and tests of other modules call ``asyncio.run``, which refuses
    to start inside a running loop. pytest ends a package's fixtures before the next test
    outside it, so the driver stops before a worker (pytest-xdist) moves on to another
    folder's module, and starts again if it comes back."""
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One Chromium for those modules: each module opens a context of its own (``page``)."""
    if not Path(CHROMIUM).exists() and shutil.which(CHROMIUM) is None:
        pytest.fail(
            f"Chromium is not at {CHROMIUM}: `make test` installs Debian's chromium package "
            "(apt-get install chromium, or chromium-headless-shell); set PROCTOR_CHROMIUM to "
            "use another binary"
        )
    launched = _launch_chromium(playwright, CHROMIUM_FLAGS)
    missing = _features_playwright_would_leave_on(launched)
    if missing:
        # A Playwright other than the one PLAYWRIGHT_DISABLED_FEATURES was read from turns
        # off more: launch again with those repeated too, rather than run with them on.
        launched.close()
        flags = [flag for flag in CHROMIUM_FLAGS if not flag.startswith("--disable-features=")]
        features = (
            PLAYWRIGHT_DISABLED_FEATURES
            + OMNIBOX_POPUP_FEATURES
            + RENDER_DOCUMENT_FEATURES
            + tuple(sorted(missing))
        )
        launched = _launch_chromium(
            playwright, [*flags, f"--disable-features={','.join(features)}"]
        )
    yield launched
    launched.close()


_LAUNCHED_LINES: dict[int, list[str]] = {}
"""The command line of the Chromium browser process each launch started, by ``id`` of its
``Browser``."""


def _launch_chromium(playwright: Playwright, flags: list[str]) -> Browser:
    before = _browser_command_lines()
    launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=flags)
    after = _browser_command_lines()
    started = [after[pid] for pid in after.keys() - before.keys()]
    _LAUNCHED_LINES[id(launched)] = [argument for line in started for argument in line]
    return launched


def _features_playwright_would_leave_on(launched: Browser) -> set[str]:
    """The features an earlier ``--disable-features`` (Playwright's) turns off that the last
    one (ours, the one Chromium reads) does not; empty where ``/proc`` cannot be read."""
    arguments = _LAUNCHED_LINES.pop(id(launched), [])
    lists = [
        set(argument.split("=", 1)[1].split(","))
        for argument in arguments
        if argument.startswith("--disable-features=")
    ]
    return set().union(*lists[:-1]) - lists[-1] if lists else set()


def _browser_command_lines() -> dict[int, list[str]]:
    """The command lines of the Chromium browser processes (not their renderers or other
    helpers) this test process started through Playwright's driver, by process id; none
    where ``/proc`` cannot be read."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    mine = {os.getpid()}
    grew = True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= found
        grew = bool(found)
    lines: dict[int, list[str]] = {}
    for pid in mine - {os.getpid()}:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        arguments = argv.split("\0")
        if "--remote-debugging-pipe" in arguments and not any(
            argument.startswith("--type=") for argument in arguments
        ):
            lines[pid] = arguments
    return lines


def _accept(dialog: Dialog) -> None:
    dialog.accept()


class _ModulePage:
    """One context and page for a module's tests, and what a test may leave behind on them."""

    def __init__(self, browser: Browser, server: str) -> None:
        self.server = server
        self.context = browser.new_context(viewport=DESKTOP, base_url=server)
        self.page = self.context.new_page()
        self.devtools = self.context.new_cdp_session(self.page)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def listeners(self) -> dict[str, list[Callable[..., Any]]]:
        """Every listener on the page, by event (Playwright's own among them)."""
        emitter = self.page._impl_obj
        return {name: list(emitter.raw_listeners(name)) for name in list(emitter._events)}

    def reset(self) -> None:
        """Leave the page as a new context's would be but for its HTTP cache: a blank
        document, nothing stored, no route, permission or cookie, the desktop size and
        default media. The HTTP cache is kept: it holds the UI's own files (the shell's ES modules, d3, the styles), as
        a returning user's browser does, which spares each later test of the module
        fetching and compiling them again (a fifth of the browser tests' CPU). The API's
        answers are not kept, or only to be revalidated each time (the graph's, ``no-cache``
        with an ETag); a test that routes requests runs with the cache off (Playwright
        turns it off while a route is set), and a test about how the shell loads its files
        takes ``fresh_page``."""
        page = self.page
        for other in self.context.pages:
            if other != page:
                other.close()
        page.unroute_all(behavior="ignoreErrors")
        self.context.unroute_all(behavior="ignoreErrors")
        if page.url.startswith(self.server):
            page.evaluate("() => { sessionStorage.clear(); localStorage.clear(); }")
        # A page left with unsaved changes asks before it unloads: leave it all the same.
        page.on("dialog", _accept)
        try:
            page.goto("about:blank")
        finally:
            page.remove_listener("dialog", _accept)
        self.devtools.send(
            "Storage.clearDataForOrigin", {"origin": self.server, "storageTypes": "all"}
        )
        self.context.clear_cookies()
        self.context.clear_permissions()
        page.set_viewport_size(DESKTOP)
        page.emulate_media(color_scheme="light")
        page.mouse.move(0, 0)
        page.set_default_timeout(TIMEOUT_MS)
        self.errors.clear()


@pytest.fixture(scope="module")
def module_page(
    browser: Browser, server: str, request: pytest.FixtureRequest
) -> Iterator[list[_ModulePage]]:
    """The module's one page (``page`` hands it to each test, reset), in a list so that
    ``page`` can replace it when a test left it beyond repair. When a later module takes a
    copy of the seeded store (``served_copy``), its server starts now, while this one runs."""
    if _asked_for_later("served_copy", request):
        spares: SpareServers = request.getfixturevalue("spare_servers")
        spares.start_one()
    shared = [_ModulePage(browser, server)]
    yield shared
    shared[0].context.close()


@pytest.fixture
def page(module_page: list[_ModulePage], browser: Browser, server: str) -> Iterator[Page]:
    """A desktop-sized page on the server; console errors fail the test.

    A new context's first page costs Chromium about a second of CPU (a renderer process,
    Playwright's scripts), more than most tests' own work: the module's tests take turns
    on one page instead, which each test's end returns to the state of a new one (a blank
    document, storage, cookies, permissions and routes cleared (the HTTP cache kept), the
    listeners the test added removed, the viewport and media back to the defaults). A test
    that changes what cannot be undone (``page.clock``, init scripts) takes ``fresh_page``.
    """
    shared = module_page[0]
    opened = shared.page
    before = shared.listeners()
    yield opened
    errors = list(shared.errors)
    try:
        for name, listeners in shared.listeners().items():
            for listener in listeners:
                if listener not in before.get(name, []):
                    opened._impl_obj.remove_listener(name, listener)
        shared.reset()
    except Exception:  # closed or crashed: the next test gets a new one
        shared.context.close()
        module_page[0] = _ModulePage(browser, server)
    assert errors == [], f"the page threw: {errors}"


@pytest.fixture
def fresh_page(browser: Browser, server: str) -> Iterator[Page]:
    """``page`` in a context of its own, for a test that changes the page for good."""
    context = browser.new_context(viewport=DESKTOP, base_url=server)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.set_default_timeout(TIMEOUT_MS)
    yield opened
    context.close()
    assert errors == [], f"the page threw: {errors}"


def screenshot(page: Page, name: str, *, full_page: bool = False) -> Path:
    """Save a screenshot (the viewport, or the whole page) as an artifact of the test run."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(target), full_page=full_page)
    return target
