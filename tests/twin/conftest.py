"""The twin's tests share the twin fixtures of the push tests (a cluster of its own, a state directory the frr user can
reach, a twin brought up and torn down around a test)."""

from tests.apply.conftest import lab_plan, netns_list, plan, state_dir, twin

__all__ = ["lab_plan", "netns_list", "plan", "state_dir", "twin"]
