"""AWS auto-scaling mode: one group per planned host (stable hostnames) and the KMS grant Auto Scaling needs.

Hostnames. An auto-scaling group replaces an instance that fails its health check with a new instance (new id, new
addresses). With one group for many hosts nothing on the new instance says which planned host it replaces, so names
handed out by instance-id order shift across nodes after a replacement. Here every planned host gets its own group
(min = max = desired = 1) that tags what it launches with ``gpufabric-host`` (``propagate_at_launch``): a replacement
comes from the same group and carries the same name, and the nodes output is read back per group.

KMS. EC2 Auto Scaling, "Required AWS KMS key policy for use with encrypted volumes"
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/key-policy-requirements-EBS-encryption.html): the service-linked
role's predefined permissions "also include access to your AWS managed keys. However, they do not include access to your
customer managed keys"; the page gives the grant that lets ``AWSServiceRoleForAutoScaling`` use a customer managed key
(operations Encrypt, Decrypt, ReEncryptFrom, ReEncryptTo, GenerateDataKey, GenerateDataKeyWithoutPlaintext, DescribeKey,
CreateGrant). Without it the group "failed to launch instances with encrypted ... volumes" (AWS re:Post
kms-launch-ec2-instance, quoted in the 2026-11 cloud audit, M4).
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

HOST_TAG = "gpufabric-host"
ASG_CAPACITY_TIMEOUT = "30m"
ASG_TAG = "aws:autoscaling:groupName"  # the tag Auto Scaling puts on every instance it launches
SLR_PATH = "role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"
GRANT_OPERATIONS = (
    "Encrypt",
    "Decrypt",
    "ReEncryptFrom",
    "ReEncryptTo",
    "GenerateDataKey",
    "GenerateDataKeyWithoutPlaintext",
    "DescribeKey",
    "CreateGrant",
)


def autoscaling_role_arn(kms_key_arn: str) -> str:
    """The Auto Scaling service-linked role of the account (and partition) that owns ``kms_key_arn``.

    Example:
        >>> autoscaling_role_arn("arn:aws:kms:us-east-1:123456789012:key/abcd")
        'arn:aws:iam::123456789012:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling'
    """
    _, partition, _, _, account, _ = kms_key_arn.split(":", 5)
    return f"arn:{partition}:iam::{account}:{SLR_PATH}"


def autoscaling_key_grant(name: str, kms_key_arn: str, opts: pulumi.ResourceOptions) -> aws.kms.Grant:
    """Let the Auto Scaling service-linked role use the customer managed key of the launch templates' root volumes."""
    return aws.kms.Grant(
        f"{name}-autoscaling-kms",
        key_id=kms_key_arn,
        grantee_principal=autoscaling_role_arn(kms_key_arn),
        operations=list(GRANT_OPERATIONS),
        opts=opts,
    )


def host_of(host: str, ids: list[str], ips: list[str]) -> dict[str, dict[str, str]]:
    """The running instance of a host's own group (none while it is being replaced).

    Example:
        >>> host_of("n1", ["i-9"], ["10.0.0.9"]), host_of("n2", [], [])
        ({'n1': {'inband': '10.0.0.9', 'instance_id': 'i-9'}}, {})
    """
    if not ids:
        return {}
    return {host: {"inband": ips[0], "instance_id": ids[0]}}


def host_group(
    name: str, host: str, *, template: aws.ec2.LaunchTemplate, subnet: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> aws.autoscaling.Group:
    """One host's auto-scaling group: exactly one instance, tagged with the planned hostname at every launch."""
    return aws.autoscaling.Group(
        f"{name}-{host}-asg",
        desired_capacity=1,
        min_size=1,
        max_size=1,
        vpc_zone_identifiers=[subnet],
        # The provider waits until the group is at capacity before it finishes (pulumi-aws autoscaling.Group
        # wait_for_capacity_timeout, default 10m); GPU instances with 32 EFAs take longer to come up.
        wait_for_capacity_timeout=ASG_CAPACITY_TIMEOUT,
        launch_template=aws.autoscaling.GroupLaunchTemplateArgs(id=template.id, version="$Latest"),
        tags=[aws.autoscaling.GroupTagArgs(key=HOST_TAG, value=host, propagate_at_launch=True)],
        opts=opts,
    )


def scaled_host(host: str, group: aws.autoscaling.Group, parent: pulumi.Resource) -> pulumi.Output[dict[str, dict[str, str]]]:
    """The host's running instance, read back by its group's tag once the group reached its capacity."""
    found = aws.ec2.get_instances_output(
        instance_tags=group.name.apply(lambda asg: {ASG_TAG: asg}),
        instance_state_names=["running"],
        opts=pulumi.InvokeOutputOptions(parent=parent, depends_on=[group]),
    )
    return pulumi.Output.all(found.ids, found.private_ips).apply(lambda got: host_of(host, list(got[0]), list(got[1])))
