"""gec.openmp_wait_policy() reports the policy OpenMP reads from the
environment (gec/threading.h)."""

import os
import subprocess
import sys


def policy_with_env(**env):
    """gec.openmp_wait_policy() in a fresh interpreter whose OpenMP variables
    are exactly `env` (the test environment sets OMP_WAIT_POLICY)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    clean.update(env)
    out = subprocess.run([sys.executable, "-c", "import gec; print(gec.openmp_wait_policy())"],
                         capture_output=True, text=True, env=clean, check=True)
    return out.stdout.strip()


def test_default_policy():
    assert policy_with_env() == "libgomp default (spin 300000)"


def test_passive_and_spin_count():
    assert policy_with_env(OMP_WAIT_POLICY="passive") == "passive"
    assert policy_with_env(OMP_WAIT_POLICY="PASSIVE", GOMP_SPINCOUNT="500") == "bounded spin (GOMP_SPINCOUNT=500)"
