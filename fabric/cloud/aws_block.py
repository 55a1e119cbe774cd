"""AWS Capacity Blocks: the stack reads the block's state before it launches on it (audit 2026-11 M8, Capacity Block end).

EC2 (``ec2-capacity-blocks``): "With 30 minutes … left … we begin terminating any instances" of the block; EC2 API
``CapacityBlock.endDate``: "When a Capacity Block expires, all instances in the Capacity Block are terminated." After
that, every ``pulumi up`` would try to launch again on a reservation that can never take an instance and fail on AWS's
side, per instance. The launch templates therefore take the block's id only through its state, read from AWS
(pulumi-aws ``ec2.get_capacity_block_reservation``: state "One of active, expired, cancelled, pending, failed, scheduled,
payment-pending, payment-failed, or assessing"): a block that ended or will never start stops the program, naming the
block, its state and end, and what to do (docs/cloud.md, "When a Capacity Block ends").
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

# States in which the block has ended or will never hold an instance.
ENDED = frozenset({"expired", "cancelled", "failed", "payment-failed"})


def checked_block(reservation_id: str, parent: pulumi.Resource) -> pulumi.Output[str]:
    """``reservation_id`` once AWS says the block can still hold instances; a ``pulumi.RunError`` naming it otherwise."""
    block = aws.ec2.get_capacity_block_reservation_output(id=reservation_id, opts=pulumi.InvokeOutputOptions(parent=parent))
    return block.apply(lambda b: _usable(reservation_id, b.state, b.end_date))


def _usable(reservation_id: str, state: str, end: str | None) -> str:
    if state in ENDED:
        raise pulumi.RunError(
            f"aws.capacity.reservation_id: Capacity Block {reservation_id} is {state} (end {end or 'unknown'}): AWS terminated "
            "or will never launch its instances, so nothing can be created on it. Fix: set the GPU group's count: 0 and "
            "`pulumi up` to keep the VPC and storage, `pulumi destroy` to remove everything, or set the new block's "
            "reservation_id (docs/cloud.md, 'When a Capacity Block ends')."
        )
    return reservation_id
