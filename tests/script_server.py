"""
Runs the repo's scripts for the tests as `python script.py args...` runs them, each in a process forked from this
one, which has imported torch already (over half of a tiny run's time is that import). tests/test_train.py's run()
starts one server per test process and writes it a request a line, JSON: {"argv", "env", "cwd", "out", "err"} (the
child's stdout and stderr go to the files out and err); the server answers each with two lines, {"pid"} once forked
and {"returncode"} once the child has ended, and ends when its stdin closes.
"""
import os
import sys
import json
import runpy
import atexit
import traceback

import torch  # noqa: F401 (the import every child inherits)

PATH = sys.path[1:]  # a fresh interpreter's sys.path after its first entry, the script's folder


def run_script(argv, env, cwd, out, err):
    """In the forked child: the script as the interpreter runs it, then exit with its code."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY), (2, err, os.O_WRONLY)):
        os.dup2(os.open(path, flags | (os.O_CREAT | os.O_TRUNC if fd else 0), 0o644), fd)
    sys.stdin, sys.stdout = open(0, closefd=False), open(1, 'w', closefd=False)
    sys.stderr = open(2, 'w', buffering=1, errors='backslashreplace', closefd=False)
    code = 0
    try:
        if argv[0] == '-c':  # python -c CODE args...
            sys.argv, sys.path[:] = ['-c', *argv[2:]], ['', *PATH]
            exec(compile(argv[1], '<string>', 'exec'), {'__name__': '__main__'})
        else:
            sys.argv, sys.path[:] = argv, [os.path.dirname(os.path.abspath(argv[0])), *PATH]
            runpy.run_path(argv[0], run_name='__main__')
    except SystemExit as e:  # as the interpreter reads it: None is 0, a message is printed and is 1
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else print(e.code, file=sys.stderr) or 1
    except BaseException:
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        run_script(**json.loads(line))
    print(json.dumps({'pid': pid}), flush=True)
    print(json.dumps({'returncode': os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}), flush=True)
