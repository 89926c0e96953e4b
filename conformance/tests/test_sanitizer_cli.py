"""The sanitizer's command line taken carelessly: it runs a program as
python does (its __file__, its traceback, its exit status) and says what is
wrong with its own arguments in one line, exit 2, as python and argparse do."""
import os
import sys

import pytest
from test_sanitizer import kit, run  # noqa: F401 - kit is a fixture

pytestmark = pytest.mark.usefixtures("kit")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_program_sees_the_file_python_gives_it(kit, tmp_path):  # noqa: F811
    """python makes __main__.__file__ absolute: a program that finds its
    data beside itself after a chdir must work sanitized too."""
    write(tmp_path, "data.txt", "beside\n")
    write(tmp_path, "prog.py", "import os, sys\nos.chdir(os.sep)\nprint(open(os.path.join("
          "os.path.dirname(__file__), 'data.txt')).read().strip(), sys.argv)\n")
    plain = run(kit, sys.executable, "prog.py", "x", sanitized=False, cwd=tmp_path)
    r = run(kit, sys.executable, "prog.py", "x", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert (r.returncode, r.stdout, r.stderr) == (0, plain.stdout, "")


def test_a_failing_program_shows_its_own_traceback(kit, tmp_path):  # noqa: F811
    write(tmp_path, "raises.py", "def f():\n    raise ValueError('mine')\n\n\nf()\n")
    write(tmp_path, "broken.py", "print('a'\n")
    for name in ("raises.py", "broken.py"):
        plain = run(kit, sys.executable, name, sanitized=False, cwd=tmp_path)
        r = run(kit, sys.executable, name, cwd=tmp_path)
        assert r.returncode == plain.returncode == 1
        assert r.stderr == plain.stderr, f"sanitized:\n{r.stderr}\nplain:\n{plain.stderr}"


def test_a_directory_without_main_is_one_line(kit, tmp_path):  # noqa: F811
    r = run(kit, sys.executable, str(tmp_path))
    assert r.returncode == 1
    assert r.stderr == f"python -m dlpack_conformance.sanitize: can't find '__main__' module in {str(tmp_path)!r}\n"
    write(tmp_path, "__main__.py", "print('main of a directory')\n")
    r = run(kit, sys.executable, str(tmp_path))
    assert (r.returncode, r.stdout) == (0, "main of a directory\n"), r.stderr


@pytest.mark.parametrize(("args", "words"), [
    (["--librar", "x.py", "prog.py"], "unrecognized arguments: --librar"),
    (["--js", "r.json", "prog.py"], "unrecognized arguments: --js"),
    (["-m"], "argument -m: expected a MODULE, as python -m takes one"),
    (["--", "-m"], "argument -m: expected a MODULE, as python -m takes one"),
    (["--error-exitcode", "300", "prog.py"], "argument --error-exitcode: invalid exit status (0 to 255) value: '300'"),
    (["--error-exitcode", "-1", "prog.py"], "argument --error-exitcode: invalid exit status (0 to 255) value: '-1'"),
    (["--error-exitcode", "many", "prog.py"], "argument --error-exitcode: invalid exit status (0 to 255) value: 'many'"),
])
def test_a_careless_argument_is_one_line_exit_2(kit, tmp_path, args, words):  # noqa: F811
    write(tmp_path, "prog.py", "print('ran')\n")
    r = run(kit, sys.executable, *args, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == ""
    assert r.stderr.splitlines()[-1] == f"python -m dlpack_conformance.sanitize: error: {words}"


def test_double_dash_ends_the_options(kit, tmp_path):  # noqa: F811
    write(tmp_path, "prog.py", "import sys\nprint(sys.argv[1:])\n")
    r = run(kit, sys.executable, "--strict", "--", os.path.join(tmp_path, "prog.py"), "--json", "x")
    assert (r.returncode, r.stdout, r.stderr) == (0, "['--json', 'x']\n", "")
