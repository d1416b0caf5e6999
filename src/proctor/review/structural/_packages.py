"""Package installs: which words of an install command name packages, in which ecosystem.

A package entity is ``name@ecosystem``: the name as the registry compares it (PyPI names
lower-cased with ``-``/``_``/``.`` folded, npm scopes kept) without version or extras, so
``pip install 'Requests[socks]>=2'`` and ``uv add requests`` are one package. Only
packages named on the command line count: ``npm install`` or ``pip install -r
requirements.txt`` install what a file lists, which the command line does not show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from proctor.review.structural._shell import Arg, program_args, program_name
from proctor.rules.builtin import SimpleCommand

# (program, subcommand) → ecosystem; "uv pip install" is matched on its first two words.
# fmt: off
_INSTALLS: dict[tuple[str, ...], str] = {
    ("pip", "install"): "pypi", ("pip3", "install"): "pypi", ("uv", "pip", "install"): "pypi",
    ("uv", "add"): "pypi", ("poetry", "add"): "pypi", ("pdm", "add"): "pypi",
    ("pipx", "install"): "pypi", ("rye", "add"): "pypi", ("pipenv", "install"): "pypi",
    ("uv", "tool", "install"): "pypi",
    ("conda", "install"): "conda", ("mamba", "install"): "conda",
    ("micromamba", "install"): "conda",
    ("npm", "install"): "npm", ("npm", "i"): "npm", ("npm", "add"): "npm",
    ("yarn", "add"): "npm", ("pnpm", "add"): "npm", ("pnpm", "install"): "npm",
    ("pnpm", "i"): "npm", ("bun", "add"): "npm", ("bun", "install"): "npm", ("bun", "i"): "npm",
    ("cargo", "add"): "crates", ("cargo", "install"): "crates",
    ("go", "get"): "go", ("go", "install"): "go",
    ("apt", "install"): "apt", ("apt-get", "install"): "apt", ("aptitude", "install"): "apt",
    ("brew", "install"): "brew", ("gem", "install"): "rubygems", ("bundle", "add"): "rubygems",
    ("composer", "require"): "packagist", ("dotnet", "add"): "nuget",
}
# The install forms a program starts, in _INSTALLS' order, so a command is compared only with
# the forms its first word can begin (most shell lines install nothing).
_INSTALLS_BY_PROGRAM: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _key, _ecosystem in _INSTALLS.items():
    _INSTALLS_BY_PROGRAM.setdefault(_key[0], []).append((_key, _ecosystem))
# Options that take a value word, per ecosystem (the value is not a package).
_VALUED: dict[str, frozenset[str]] = {
    "pypi": frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i",
                       "--index-url", "--extra-index-url", "-t", "--target", "--prefix",
                       "--python", "-p", "-f", "--find-links", "--platform", "--group",
                       "--optional", "-G", "--source", "--root", "--only-binary",
                       "--no-binary", "--python-version", "--implementation", "--abi"}),
    "conda": frozenset({"-c", "--channel", "-n", "--name", "-p", "--prefix"}),
    "npm": frozenset({"--registry", "--prefix", "--tag", "--workspace", "--filter",
                      "--cache", "--userconfig"}),
    "crates": frozenset({"--version", "--vers", "--git", "--branch", "--tag", "--rev",
                         "--path", "-F", "--features", "--rename", "--registry", "--target",
                         "--root", "-p", "--package", "--index"}),
    "go": frozenset({"-tags", "-modfile"}),
    "apt": frozenset({"-o", "-t", "--target-release", "-c"}),
    "brew": frozenset(),
    "rubygems": frozenset({"-v", "--version", "-s", "--source", "-i", "--install-dir"}),
    "packagist": frozenset(),
    "nuget": frozenset({"-v", "--version", "-s", "--source", "-f", "--framework"}),
}
# fmt: on
_PYPI_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
_NOT_A_NAME = re.compile(r"://|^\.{0,2}/|^~|\.(?:whl|tar\.gz|zip|tgz)$|^git\+|^file:|[$`*]")


@dataclass(frozen=True, slots=True)
class PackageUse:
    """A package an install command names."""

    name: str
    ecosystem: str
    written: str
    """The word as written (``'requests[socks]>=2'``), for the event's summary."""
    span: tuple[int, int] | None
    command_span: tuple[int, int]

    @property
    def identity(self) -> str:
        """``name@ecosystem``."""
        return f"{self.name}@{self.ecosystem}"


def package_installs(commands: Sequence[SimpleCommand]) -> list[PackageUse]:
    """Every package the line's install commands name."""
    found: list[PackageUse] = []
    for command in commands:
        args = program_args(command)
        program = program_name(args)
        forms = _INSTALLS_BY_PROGRAM.get(program)
        if forms is None:
            continue
        words = [program, *(a.text for a in args[1:])]
        for key, ecosystem in forms:
            if tuple(words[: len(key)]) == key:
                rest = list(args[len(key) :])
                if ecosystem == "nuget":
                    rest = _after_word(rest, "package")
                for arg in _positionals(rest, _VALUED[ecosystem]):
                    name = _name(arg.text, ecosystem)
                    if name:
                        found.append(
                            PackageUse(
                                name, ecosystem, arg.text, arg.span, (command.start, command.end)
                            )
                        )
                break
    return found


def _after_word(args: list[Arg], word: str) -> list[Arg]:
    """``dotnet add app.csproj package Foo`` → the words after ``package``."""
    texts = [a.text for a in args]
    return args[texts.index(word) + 1 :] if word in texts else []


def _positionals(args: list[Arg], valued: frozenset[str]) -> list[Arg]:
    found: list[Arg] = []
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            found.extend(args[index + 1 :])
            break
        if text.startswith("-"):
            index += 2 if text in valued else 1
            continue
        found.append(args[index])
        index += 1
    return found


def _name(text: str, ecosystem: str) -> str | None:
    """The registry name of a package word, or None when the word is a file, URL or path."""
    if not text or _NOT_A_NAME.search(text):
        return None
    if ecosystem in ("pypi", "conda"):
        match = _PYPI_NAME.match(text)
        if match is None:
            return None
        name = match.group(0).rstrip("._-")
        return re.sub(r"[-_.]+", "-", name).lower() if ecosystem == "pypi" else name.lower()
    if ecosystem == "npm":
        scoped = text.startswith("@")
        name = ("@" if scoped else "") + text[1 if scoped else 0 :].split("@", 1)[0]
        if name.startswith(("npm:", "github:")) or name in ("", "@"):
            return None
        return name.lower()
    if ecosystem in ("crates", "go", "rubygems", "brew", "packagist", "nuget"):
        name = text.split("@", 1)[0] if ecosystem != "packagist" else text.split(":", 1)[0]
        return name or None
    if ecosystem == "apt":
        name = text.split("=", 1)[0]
        return name.lower() or None
    return text
