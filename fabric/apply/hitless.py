"""``push --drain``: one device's change without losing traffic.

drain (the policy of ``fabric.apply.drain`` on top of the running config) → wait until every neighbour routes the
planned prefixes around the switch (no next hop through it, the other paths all there) → change to the drained
candidate under the usual transaction (its post-check included) → undrain → wait until every neighbour has its
paths back (no fewer next hops than before the drain: the post-check again, undrained; a change that fails it is
reverted to the backup) → save. Each step goes to the change record as it happens.

A failed or interrupted change still ends undrained: a failed post-check reverts to the drained running config and
then undrains; an exception (a session lost mid-change) undrains on a best-effort basis and the rollout's recovery
restores the backup, which was read before the drain (undrained). A drain that cannot move the traffic (a prefix
reachable only through the switch, neighbours that keep using it) changes nothing and is undone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fabric.apply.checks.neighbours import NeighbourView, Paths, fewer_paths, not_drained, only_through
from fabric.apply.checks.routing import Waiting, hold_clean
from fabric.apply.drain import drain_policy, has_bgp
from fabric.apply.nos import Adapter
from fabric.apply.record import ChangeRecord
from fabric.apply.session import Session
from fabric.apply.transaction import PushResult, revert
from fabric.errors import DrainError

# The change itself: (drained candidate, drained running config, neighbours' paths while drained) → its result.
Change = Callable[[str, str, Mapping[str, Paths]], PushResult]


@dataclass(frozen=True, slots=True)
class Drain:
    """One switch's drain: where it runs, who watches, how long to wait."""

    device: str
    adapter: Adapter
    session: Session
    view: NeighbourView
    own: frozenset[str]  # the prefixes the switch originates (a drain cannot move those)
    change: str
    timeout_s: float
    hold_s: float
    record: ChangeRecord | None
    progress: Callable[[str, str], None]

    def _event(self, event: str, detail: str = "") -> None:
        self.progress(self.device, event + (f": {detail}" if detail else ""))
        if self.record is not None:
            self.record.drain(self.device, event, detail)

    def _wait(self, sample: Callable[[], list[str]], what: str) -> list[str]:
        waiting: Waiting = lambda text: self.progress(self.device, text)  # noqa: E731 - a one-line sink
        return hold_clean(sample, timeout_s=self.timeout_s, hold_s=self.hold_s, waiting=waiting, what=what)

    def run(self, running: str, candidate: str, change: Change) -> PushResult:
        """Drain, change, undrain (see the module docstring); never leaves the switch drained without saying so."""
        before = self.view.read()
        if not has_bgp(running):  # nothing routes through it yet: nothing to drain
            self._event("not drained", "it runs no BGP yet")
            return change(candidate, running, before)
        try:
            if stuck := only_through(self.view, before, self.device, self.own):
                msg = f"cannot drain {self.device}: {'; '.join(stuck[:3])}" + (f" (+{len(stuck) - 3} more)" if len(stuck) > 3 else "")
                raise DrainError(msg)
            policy = drain_policy(running, self.device)
            drained_candidate = drain_policy(candidate, self.device).apply(candidate)
        except DrainError as exc:  # refused before anything is sent
            return PushResult(self.device, changed=False, diff=[], error=str(exc), backup=running)
        self._event("draining", f"{len(policy.entries)} route-map entries get the drain policy")
        self.adapter.stage(self.session, self.change, policy.lines(), running)
        try:
            moved = self._wait(lambda: not_drained(self.view, before, self.view.read(), self.device, self.own), "drain")
            if moved:
                result = PushResult(self.device, changed=False, diff=[], error=f"the drain did not move the traffic: {'; '.join(moved[:3])}")
            else:
                self._event("drained", f"{len(self.view.reachable)} neighbours route around it")
                result = change(drained_candidate, self.adapter.running(self.session), self.view.read())
        except BaseException:
            with contextlib.suppress(Exception):  # best effort; the rollout's recovery restores the (undrained) backup
                self._undrain(before, saved=False)
            raise
        result.backup = running
        return self._finish(result, before, running)

    def _finish(self, result: PushResult, before: Mapping[str, Paths], backup: str) -> PushResult:
        """Undrain; a committed change whose neighbours do not get their paths back (the post-check again, undrained)
        is reverted to the backup and saved."""
        try:
            problems = self._undrain(before, saved=result.committed)
        except Exception as exc:  # noqa: BLE001 - reported: the switch may still be drained
            self._event("undrain failed", str(exc))
            result.error = (f"{result.error}; " if result.error else "") + f"STILL DRAINED: undrain failed ({exc}); undrain {self.device} by hand"
            return result
        if problems:
            why = "undrained, but neighbours did not take the traffic back: " + "; ".join(problems[:3])
            result.error = f"{result.error}; {why}" if result.error else why
            if result.committed:
                self._event("rolling back", "the change fails the post-check undrained")
                result.rolled_back = revert(self.adapter, self.session, self.change, backup)
                self.adapter.confirm(self.session, self.change)  # save what runs now: the backup (or what is left of the change)
                result.committed = False
                if not result.rolled_back:
                    result.error += "; ROLLBACK INCOMPLETE: running config differs from the backup"
        return result

    def _undrain(self, before: Mapping[str, Paths], *, saved: bool) -> list[str]:
        """Remove the drain policy (from whatever runs now), save if the change was confirmed, wait for the paths."""
        running = self.adapter.running(self.session)
        policy = drain_policy(running, self.device)
        self.adapter.stage(self.session, self.change, policy.undo_lines(), running)
        if saved:
            self.adapter.confirm(self.session, self.change)  # the confirm saved the drained config: save it undrained
        if any(line.strip() in policy.sets for line in self.adapter.running(self.session).splitlines()):
            msg = "the drain policy is still in the running config"
            raise DrainError(msg)
        problems = self._wait(lambda: fewer_paths(self.view, before, self.view.read()), "undrain")
        self._event("undrained", "; ".join(problems[:3]) if problems else "every neighbour has its paths back")
        return problems
