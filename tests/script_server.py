"""
Runs the repo's scripts for the tests as `python script.py args...` runs them, each in a process forked from this
one, which has imported torch and the parts of it that the scripts import already (four fifths of a tiny run's time
is those imports: a child runs in a fraction of a second). tests/test_train.py's run() starts one server per test
process and environment, and writes it a request a line, JSON: {"argv", "env", "cwd", "out", "err"} (the
child's stdout and stderr go to the files out and err, one file where they are the same); the server answers each
with two lines, {"pid"} once forked and {"returncode"} once the child has ended, and ends when its stdin closes.
A request with "status": a file is a run in the background (tests/test_train.py's background()): the child in a session
of its own, as Popen(start_new_session=True) starts it; the server answers {"pid"} alone, and writes the child's
returncode to that file when it ends.
"""
import os
import sys
import json
import runpy
import atexit
import signal
import traceback

# The imports every child inherits, made in the child's own environment (tests/test_train.py starts a server per
# environment: Triton, which torch._dynamo imports, reads TRITON_INTERPRET as it defines its functions). Third-party
# modules alone: the repo's are the scripts' to import.
import numpy  # noqa: F401
import torch  # noqa: F401
import torch._dynamo  # noqa: F401
import torch.distributed.checkpoint  # noqa: F401
import torch.distributed.fsdp  # noqa: F401
import torch.nn.parallel  # noqa: F401

PATH = sys.path[1:]  # a fresh interpreter's sys.path after its first entry, the script's folder


def run_script(argv, env, cwd, out, err, status=None):
    """In the forked child: the script as the interpreter runs it, then exit with its code."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server's reaper is not the script's
    if status:
        os.setsid()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY), (2, err, os.O_WRONLY)):
        os.dup2(os.open(path, flags | (os.O_CREAT | os.O_TRUNC if fd else 0), 0o644), fd)
    if err == out:  # stderr=STDOUT: one file, written in turn
        os.dup2(1, 2)
    # PYTHONUNBUFFERED: each line written as it is printed
    sys.stdin, sys.stdout = open(0, closefd=False), open(1, 'w', buffering=1 if env.get('PYTHONUNBUFFERED') else -1,
                                                         closefd=False)
    sys.stderr = open(2, 'w', buffering=1, errors='backslashreplace', closefd=False)
    code = 0
    try:
        if argv[0] == '-c':  # python -c CODE args...
            sys.argv, sys.path[:] = ['-c', *argv[2:]], ['', *PATH]
            exec(compile(argv[1], '<string>', 'exec'), {'__name__': '__main__'})
        elif argv[0] == '-m':  # python -m MODULE args... (torchrun)
            sys.argv, sys.path[:] = [argv[1], *argv[2:]], [cwd, *PATH]
            runpy.run_module(argv[1], run_name='__main__', alter_sys=True)
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


background = {}  # {pid: its status file} of the children in the background, until they end


def reap(*signal_args):
    """At each SIGCHLD: the returncode of each child in the background that has ended, written to its status file
    (whole, then renamed into place)."""
    for pid in list(background):
        try:
            ended, wait_status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped by the call that this one interrupted
            continue
        if ended:
            status = background.pop(pid)
            with open(status + '.tmp', 'w') as f:
                f.write(str(os.waitstatus_to_exitcode(wait_status)))
            os.replace(status + '.tmp', status)


signal.signal(signal.SIGCHLD, reap)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        run_script(**request)
    print(json.dumps({'pid': pid}), flush=True)
    if request.get('status'):
        background[pid] = request['status']
        reap()  # one that has ended already sent its SIGCHLD before it was listed
    else:
        print(json.dumps({'returncode': os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}), flush=True)
