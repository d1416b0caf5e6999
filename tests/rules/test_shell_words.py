"""The one shell parser behind every rule: simple commands, positions, unwrapping, nesting.

The permission rules cite the characters of each word; the destructive, loop, secret and
claim rules judge the program that really runs (``sudo``, ``env``, ``bash -c`` peeled
off) and whole pipelines. Both read the same parse of a line.
"""

from __future__ import annotations

from proctor.rules.builtin._shell_words import simple_commands


def _summary(line: str) -> list[tuple[tuple[str, ...], str, str]]:
    return [(c.argv, c.text, c.origin) for c in simple_commands(line)]


def test_wrappers_are_peeled_off_but_the_words_stay_as_written() -> None:
    line = "sudo -u root env A=1 nice -n 5 timeout 10 rm -rf / && echo ok"
    first, second = simple_commands(line)
    assert first.argv == ("rm", "-rf", "/")
    assert first.program == "rm" and first.args == ("-rf", "/")
    assert [w.text for w in first.words][:3] == ["sudo", "-u", "root"]
    assert first.text == line[first.start : first.end] == line.split(" && ")[0]
    assert (first.separator, second.separator) == ("&&", "")


def test_pipelines_and_stages() -> None:
    curl, sh, ls = simple_commands("curl -fsSL x | sh; ls")
    assert curl.pipeline == sh.pipeline != ls.pipeline
    assert (curl.stage, sh.stage, ls.stage) == (0, 1, 0)
    assert curl.separator == "|"


def test_command_lines_run_by_a_command_follow_it_with_positions_in_the_line() -> None:
    line = "bash -c 'cd /tmp && rm -rf /' ; ssh prod 'sudo rm -rf /var/lib/app'"
    assert _summary(line) == [
        (("bash", "-c", "cd /tmp && rm -rf /"), "bash -c 'cd /tmp && rm -rf /'", ""),
        (("cd", "/tmp"), "cd /tmp", "script"),
        (("rm", "-rf", "/"), "rm -rf /", "script"),
        (("ssh", "prod", "sudo rm -rf /var/lib/app"), "ssh prod 'sudo rm -rf /var/lib/app'", ""),
        (("rm", "-rf", "/var/lib/app"), "sudo rm -rf /var/lib/app", "script"),
    ]


def test_substitutions_come_after_their_line_and_are_read_once() -> None:
    assert _summary('sh -c "$(curl -fsSL x)"; echo `id`') == [
        (("sh", "-c", "$(curl -fsSL x)"), 'sh -c "$(curl -fsSL x)"', ""),
        (("$(curl -fsSL x)",), "$(curl -fsSL x)", "script"),
        (("echo", "`id`"), "echo `id`", ""),
        (("curl", "-fsSL", "x"), "curl -fsSL x", "substitution"),
        (("id",), "id", "substitution"),
    ]


def test_here_documents_are_data_unless_fed_to_a_shell() -> None:
    (psql,) = simple_commands("psql <<'SQL'\nDROP TABLE x;\nSQL")
    assert psql.heredoc == "DROP TABLE x;"
    assert psql.text == "psql <<'SQL'"
    assert _summary("bash <<EOF\nrm -rf /\nEOF\necho done") == [
        (("bash",), "bash <<EOF", ""),
        (("rm", "-rf", "/"), "rm -rf /", "script"),
        (("echo", "done"), "echo done", ""),
    ]


def test_redirections_name_the_files_output_goes_to() -> None:
    (command,) = simple_commands("make > build.log 2>&1 >&2 &>> all.log < in.txt")
    assert [(r.fd, r.operator, r.output_file) for r in command.redirects] == [
        ("", ">", "build.log"),
        ("2", ">&", None),
        ("", ">&", None),
        ("", "&>>", "all.log"),
        ("", "<", None),
    ]


def test_quoted_operators_and_comments_are_not_commands() -> None:
    assert _summary("echo 'a > b; rm x' # && rm -rf /") == [
        (("echo", "a > b; rm x"), "echo 'a > b; rm x'", "")
    ]


def test_parses_are_cached_and_never_fail() -> None:
    assert simple_commands("ls -la") is simple_commands("ls -la")
    for line in ('rm "x', "echo $(ls", "cat <<EOF", "( ( (", "|", ""):
        simple_commands(line)
