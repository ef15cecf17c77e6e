"""
configurator.configure: overrides from config files and --key=value, type checks, and
one-line errors (exit code 2) for every mistake a user can make on the command line.
"""
import os
import sys
import subprocess

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from configurator import configure, fail, device_and_autocast, user_errors


def defaults():
    return dict(out_dir='out', wandb_run_name='gpt2', max_iters=100, learning_rate=6e-4,
                compile=True, n_kv_head=None, _private=1, MAX_WIDTH=4096, os=os, configure=configure)


def fails(capsys, argv, g=None):
    """Run configure, expecting exit code 2; return its one stderr line."""
    with pytest.raises(SystemExit) as e:
        configure(defaults() if g is None else g, argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith('error: '), err
    return err.strip()


def test_an_error_is_one_line_in_one_write(monkeypatch):
    """torchrun's ranks fail together into one stream: a line written in two parts could be cut by another's."""
    writes = []
    monkeypatch.setattr(sys, 'stderr', type('Stderr', (), {'write': lambda self, s: writes.append(s)})())
    with pytest.raises(SystemExit) as e:
        fail("a message\nover two lines")
    assert e.value.code == 2 and writes == ["error: a message over two lines\n"]


def test_a_value_error_inside_user_errors_is_the_one_line_error(capsys):
    """The scripts' own refusals (ValueErrors) end as fail() does; any other exception is a bug and stays one."""
    with pytest.raises(SystemExit) as e:
        with user_errors():
            raise ValueError("a setting\nthe user can fix")
    assert e.value.code == 2 and capsys.readouterr().err == "error: a setting the user can fix\n"
    with pytest.raises(KeyError):
        with user_errors():
            raise KeyError("a bug")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_no_args_returns_config_keys_only():
    g = defaults()
    assert configure(g, []) == dict(out_dir='out', wandb_run_name='gpt2', max_iters=100,
                                    learning_rate=6e-4, compile=True, n_kv_head=None)


def test_overrides_of_each_type(capsys):
    g = defaults()
    config = configure(g, ['--max_iters=5', '--learning_rate=1e-3', '--compile=False',
                           '--out_dir=out-x', '--n_kv_head=4'])
    assert config == dict(out_dir='out-x', wandb_run_name='gpt2', max_iters=5, learning_rate=1e-3,
                          compile=False, n_kv_head=4)
    assert g['max_iters'] == 5 and g['compile'] is False and g['out_dir'] == 'out-x'  # in place
    out = capsys.readouterr().out
    assert 'config: max_iters = 5' in out and "config: out_dir = 'out-x'" in out


def test_int_for_float_is_converted():
    g = defaults()
    configure(g, ['--learning_rate=1'])
    assert g['learning_rate'] == 1.0 and type(g['learning_rate']) is float


@pytest.mark.parametrize('arg, expected', [
    ('--max_iters=1.5', "error: --max_iters expects int, got 1.5 (float)"),
    ('--max_iters=abc', "error: --max_iters expects int, got 'abc' (str)"),
    ('--max_iters=True', "error: --max_iters expects int, got True (bool)"),
    ('--learning_rate=fast', "error: --learning_rate expects float, got 'fast' (str)"),
    ('--compile=1', "error: --compile expects bool, got 1 (int)"),
    ('--compile=yes', "error: --compile expects bool, got 'yes' (str)"),
])
def test_wrong_types_refused(capsys, arg, expected):
    assert fails(capsys, [arg]) == expected


@pytest.mark.parametrize('raw, value', [('True', True), ('False', False), ('true', True), ('false', False)])
def test_bool_parsing(raw, value):
    g = defaults()
    configure(g, [f'--compile={raw}'])
    assert g['compile'] is value


@pytest.mark.parametrize('raw, value', [
    ('out-x', 'out-x'), ('123', '123'), ("'a'", 'a'), ('"b c"', 'b c'), ("'None'", 'None'), ('', ''),
    ('a=b', 'a=b'),
])
def test_str_keys_take_raw_text(raw, value):
    g = defaults()
    configure(g, [f'--wandb_run_name={raw}'])
    assert g['wandb_run_name'] == value


@pytest.mark.parametrize('raw, value', [('4', 4), ('0.5', 0.5), ('abc', 'abc'), ("'x'", 'x'), ('[1, 2]', [1, 2])])
def test_none_default_takes_anything(raw, value):
    g = defaults()
    configure(g, [f'--n_kv_head={raw}'])
    assert g['n_kv_head'] == value


def test_none_only_for_none_defaults_and_optional_keys(capsys):  # sample.py's --top_k=None
    assert fails(capsys, ['--max_iters=None']) == "error: --max_iters expects int, got None (NoneType)"
    assert fails(capsys, ['--out_dir=None']) == "error: --out_dir expects str, got None (NoneType)"
    g = defaults()
    configure(g, ['--max_iters=None', '--n_kv_head=None'], optional=('max_iters',))
    assert g['max_iters'] is None and g['n_kv_head'] is None


def test_none_in_a_config_file_follows_the_same_rule(capsys, tmp_path):
    path = write(tmp_path, 'c.py', 'max_iters = None\n')
    assert fails(capsys, [path]) == f"error: max_iters in {path} expects int, got None (NoneType)"
    g = defaults()
    configure(g, [path], optional=('max_iters',))
    assert g['max_iters'] is None


def test_unknown_key_suggests_close_names(capsys):
    assert fails(capsys, ['--max_iter=5']) == "error: unknown config key 'max_iter' (did you mean: max_iters?)"
    assert (fails(capsys, ['--lerning_rate=1'])
            == "error: unknown config key 'lerning_rate' (did you mean: learning_rate?)")


def test_unknown_key_without_close_names_points_to_help(capsys):
    assert '--help' in fails(capsys, ['--zzzzzz=1'])


@pytest.mark.parametrize('name', ['_private', 'os', 'configure'])
def test_non_config_globals_are_not_keys(capsys, name):
    assert f"unknown config key '{name}'" in fails(capsys, [f'--{name}=1'])


def test_key_space_value_refused(capsys):
    g = defaults()
    msg = fails(capsys, ['--max_iters', '5'], g)
    assert '--key=value' in msg and '--max_iters' in msg
    assert g['max_iters'] == 100


def test_bool_key_alone_means_true(capsys):
    g = dict(defaults(), compile=False)
    configure(g, ['--compile'])
    assert g['compile'] is True
    assert '--key=value' in fails(capsys, ['--out_dir'])
    assert fails(capsys, ['--compile', 'False']) == ("error: config file 'False' not found (a value goes with its key, "
                                                     "in one argument: --key=value)")


def test_config_file_applied_then_overridden(tmp_path, capsys):
    path = write(tmp_path, 'x.py', "import math\n"
                                   "def helper(n): return 2 * n\n"
                                   "max_iters = helper(int(math.sqrt(16)))  # 8\n"
                                   "learning_rate = 1  # int for a float\n"
                                   "n_kv_head = 'anything'\n"
                                   "_scratch = [1, 2]\n"
                                   "TOKENS = 4 * 1024  # the file's own constant\n")
    g = defaults()
    config = configure(g, [path, '--max_iters=3'])
    assert config['max_iters'] == 3 and g['max_iters'] == 3
    assert g['learning_rate'] == 1.0 and type(g['learning_rate']) is float
    assert g['n_kv_head'] == 'anything'
    assert 'math' not in config and 'helper' not in config and 'TOKENS' not in config and g['os'] is os
    out = capsys.readouterr().out
    assert f'config: applying {path}' in out and 'config: max_iters = 3' in out


def test_config_file_sees_current_values(tmp_path):
    path = write(tmp_path, 'x.py', "max_iters = max_iters * 2\nout_dir = out_dir + '-x'\n")
    g = defaults()
    configure(g, ['--max_iters=7', path])
    assert g['max_iters'] == 14 and g['out_dir'] == 'out-x'


def test_several_config_files_in_order(tmp_path):
    a = write(tmp_path, 'a.py', "max_iters = 10\nout_dir = 'out-a'\n")
    b = write(tmp_path, 'b.py', "max_iters = 20\ncompile = False\n")
    g = defaults()
    configure(g, [a, b])
    assert (g['max_iters'], g['out_dir'], g['compile']) == (20, 'out-a', False)
    configure(g, [b, a])
    assert g['max_iters'] == 10


def test_unknown_key_in_config_file(tmp_path, capsys):
    path = write(tmp_path, 'x.py', "max_iter = 5\n")
    msg = fails(capsys, [path])
    assert msg == (f"error: unknown config key 'max_iter' in {path} (did you mean: max_iters?; a name of the file's "
                   f"own starts with _ or is UPPER_CASE (_max_iter))")


def test_unknown_keys_in_config_file_skipped_when_asked(tmp_path, capsys):
    path = write(tmp_path, 'x.py', "max_iters = 5\nbatch_size = 64\ndataset = 'x'\n")
    g = defaults()
    configure(g, [path], skip_unknown_in_files=True)
    assert g['max_iters'] == 5 and 'batch_size' not in g
    assert 'config: not used here: batch_size, dataset' in capsys.readouterr().out
    with pytest.raises(SystemExit):  # the command line stays strict
        configure(defaults(), ['--max_iterz=1'], skip_unknown_in_files=True)
    assert "unknown config key 'max_iterz'" in capsys.readouterr().err


def test_wrong_type_in_config_file(tmp_path, capsys):
    path = write(tmp_path, 'x.py', "max_iters = 1.5\n")
    assert fails(capsys, [path]) == f"error: max_iters in {path} expects int, got 1.5 (float)"


def test_missing_config_file(capsys):
    assert fails(capsys, ['config/nope.py']) == "error: config file 'config/nope.py' not found"


@pytest.mark.parametrize('source, name', [
    ("max_iters = 1 / 0\n", 'ZeroDivisionError'),
    ("max_iters = = 3\n", 'SyntaxError'),
    ("import no_such_module_xyz\n", 'ModuleNotFoundError'),
    ("raise ValueError('line one\\nline two')\n", 'ValueError'),
])
def test_exception_in_config_file(tmp_path, capsys, source, name):
    path = write(tmp_path, 'bad.py', source)
    msg = fails(capsys, [path])
    assert f"config file '{path}'" in msg and name in msg


def test_help_lists_defaults_and_exits_0(capsys):
    for flag in ('--help', '-h'):
        with pytest.raises(SystemExit) as e:
            configure(defaults(), ['--max_iters=5', flag])
        assert e.value.code == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines == ["--out_dir = 'out'", "--wandb_run_name = 'gpt2'", "--max_iters = 100",
                         "--learning_rate = 0.0006", "--compile = True", "--n_kv_head = None"]


def test_help_gives_each_keys_comment(tmp_path):
    script = write(tmp_path, 'script.py', f"import sys\nsys.path.insert(0, {ROOT!r})\n"
                                          "batch_size = 12  # micro-batch size\nlearning_rate = 6e-4\n"
                                          "from configurator import configure\nconfig = configure(globals())\n")
    r = subprocess.run([sys.executable, script, '--help'], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.splitlines() == ["--batch_size = 12         micro-batch size",
                                                           "--learning_rate = 0.0006"], r.stdout


def test_command_line_keys_are_the_ones_given_there():
    from configurator import command_line_keys
    assert command_line_keys(['config/x.py', '--cuda_graph=True', '--compile']) == {'cuda_graph', 'compile'}


def test_script_with_bad_key_exits_2_with_one_line(tmp_path):
    script = write(tmp_path, 'script.py', f"import sys\nsys.path.insert(0, {ROOT!r})\n"
                                          "batch_size = 12\nlearning_rate = 6e-4\n"
                                          "from configurator import configure\n"
                                          "config = configure(globals())\nprint('ran')\n")
    r = subprocess.run([sys.executable, script, '--batch_sise=4'], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["error: unknown config key 'batch_sise' (did you mean: batch_size?)"]
    assert 'Traceback' not in r.stderr and 'ran' not in r.stdout


@pytest.mark.parametrize('device, local_rank, current', [('cuda', None, 0), ('cuda', '1', 1), ('cuda:0', '1', 1),
                                                         ('cuda:1', None, 1), ('auto', '1', 1)])
def test_a_cuda_device_is_made_current_as_torchrun_ranks_need(monkeypatch, device, local_rank, current):
    """Without touching a GPU: 'cuda' (any index) is LOCAL_RANK's GPU under torchrun, and is made current by index
    before anything else runs on CUDA; an index past the devices present is a one-line error."""
    made_current = []
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: True)
    monkeypatch.setattr(torch.cuda, 'device_count', lambda: 2)
    monkeypatch.setattr(torch.cuda, 'set_device', made_current.append)
    for key in ('RANK', 'LOCAL_RANK'):
        monkeypatch.delenv(key, raising=False)
    if local_rank is not None:  # torchrun sets both
        monkeypatch.setenv('RANK', local_rank)
        monkeypatch.setenv('LOCAL_RANK', local_rank)
    resolved, device_type, dtype, _ = device_and_autocast(device, 'float32')
    assert (resolved, device_type, dtype) == (f'cuda:{current}' if local_rank or ':' in device else 'cuda', 'cuda',
                                              torch.float32) and made_current == [current]
    monkeypatch.delenv('RANK', raising=False)
    with pytest.raises(SystemExit):
        device_and_autocast('cuda:2', 'float32')


def test_a_lower_precision_on_the_cpu_autocasts_and_says_it_is_slow(capsys):
    """nanoGPT runs fp32 on a CPU whatever dtype says; here dtype is what autocast runs in, with a line about it."""
    for dtype, autocast in (('auto', False), ('float32', False), ('bfloat16', True)):
        _, _, ptdtype, ctx = device_and_autocast('cpu', dtype)
        assert isinstance(ctx, torch.autocast) == autocast and (ptdtype == torch.bfloat16) == autocast
        assert ('slower than in float32' in capsys.readouterr().out) == autocast, dtype
