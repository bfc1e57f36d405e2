"""Otter checks for forward, generated from the public tests (do not edit)."""

import importlib
import importlib.util
import inspect
import sys

import torch
from otter.test_files import test_case

OK_FORMAT = False
name = 'forward'
points = 1.0


def _run(env, file_name, test_name):
    sys.path.insert(0, '.')
    student = env.get('decoding') or importlib.import_module('decoding')
    spec = importlib.util.spec_from_file_location('_public_' + file_name[:-3], 'public_tests/' + file_name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    test = getattr(module, test_name)
    fixtures = {'student': student, 'seed': 0, 'gen': torch.Generator().manual_seed(0)}
    test(**{p: fixtures[p] for p in inspect.signature(test).parameters})


@test_case(name='test_forward_prompt_then_one_token_at_a_time', points=1.0, hidden=False)
def case_1(env):
    _run(env, 'test_decoding_public.py', 'test_forward_prompt_then_one_token_at_a_time')
