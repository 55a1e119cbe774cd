"""The command forms that carry a secret, per NOS, as data for the token scanner of ``fabric.apply.secrets``.

A form is a keyword token, optional (or required) slots for the words that may stand between it and the secret
(encryption type, algorithm, key number), then the secret token. Forms are matched token by token, never by a
backtracking pattern, so masking is linear in a line's length. Only documented forms are listed; each cites where:

- Arista EOS User Manual (4.2x): ``username NAME [privilege N] [role R] secret [0|5|sha512] VALUE``, ``enable
  password [0|5|sha512] VALUE``, ``snmp-server community NAME``, ``snmp-server user NAME GROUP v3 auth
  md5|sha|sha256|sha384|sha512 KEY priv des|aes|aes192|aes256 KEY`` (the ``snmp-server user`` command),
  ``tacacs-server [host H] key [0|7] VALUE``, ``radius-server [host H] key [0|7] VALUE``, ``ntp authentication-key N
  md5|sha1 [0|7] VALUE``, ``neighbor X password [0|7] VALUE``, ``ip ospf authentication-key [0|7] VALUE``, ``ip ospf
  message-digest-key N md5|sha1|sha256 [0|7] VALUE``.
- Cisco Nexus 9000 NX-OS (10.x) Security and System Management configuration guides: ``username NAME password [0|5]
  VALUE``, ``snmp-server user NAME [GROUP] auth md5|sha|sha-256|sha-384|sha-512 VALUE [priv [aes-128] VALUE]
  [localizedkey]``, ``snmp-server community NAME``, ``tacacs-server [host H] key [0|7] "VALUE"``, ``radius-server
  key [0|7] "VALUE"``, ``neighbor X password 3|7 VALUE``, ``key-string [7] VALUE``.
- NVIDIA Cumulus Linux 5.x NVUE command reference: ``nv set system aaa user NAME password|hashed-password VALUE``,
  ``nv set service snmp-server readonly-community NAME``, ``nv set service snmp-server username NAME auth-md5|auth-sha
  KEY encrypt-des|encrypt-aes KEY`` (SNMPv3 users), ``nv set system aaa tacacs server N secret VALUE``, ``nv set
  system aaa radius server H secret|key VALUE``, ``nv set vrf V router bgp neighbor X password VALUE``; the TACACS+
  client file ``/etc/tacplus_servers`` (``secret=VALUE``).
- net-snmp ``snmpd.conf(5)`` (under Cumulus and SONiC): ``createUser NAME MD5|SHA|SHA-224|SHA-256|SHA-384|SHA-512
  AUTHPASS [DES|AES [PRIVPASS]]``.
- SONiC config_db (sonic-buildimage ``src/sonic-yang-models``: sonic-system-tacacs, sonic-system-radius, sonic-snmp,
  sonic-bgp-common, sonic-macsec): TACPLUS/TACPLUS_SERVER/RADIUS/RADIUS_SERVER ``passkey``, SNMP_USER
  ``SNMP_USER_AUTH_PASSWORD`` and ``SNMP_USER_ENCRYPTION_PASSWORD``, BGP_NEIGHBOR ``auth_password``, MACSEC_PROFILE
  ``primary_cak``/``fallback_cak``, and the entry names of SNMP_COMMUNITY (the communities themselves).
- FRR user guide (8.x/9.x): ``password VALUE``, ``enable password VALUE``, ``neighbor X password VALUE``, ``ip ospf
  authentication-key VALUE``, ``ip ospf message-digest-key N md5 VALUE``, ``key-string VALUE``, isisd
  ``area-password|domain-password [clear|md5] VALUE``.
- NVIDIA MLNX-OS (Onyx) user manual: ``username NAME password [0|7] VALUE``, ``snmp-server community NAME``,
  ``tacacs-server [host H] key [0|7] VALUE``, ``radius-server [host H] key [0|7] VALUE``.
"""

from __future__ import annotations

from dataclasses import dataclass

NUMBER = "<int>"  # a slot word that stands for any run of digits (a key number)
ANY = "<any>"  # a slot word that stands for any token (a user name)


@dataclass(frozen=True, slots=True)
class Slot:
    """Words that may stand at this place between the keyword and the secret; ``required``: one of them must."""

    words: frozenset[str]
    required: bool = False


@dataclass(frozen=True, slots=True)
class Form:
    """A secret's command form: ``keyword`` (preceded by ``after`` when given), ``slots``, then the secret token.

    ``unless`` names the words that, in the secret's place, mean the line is another command (``key chain NAME``).
    ``then``: the slots of a second secret right after the first (net-snmp's privacy passphrase).
    """

    keyword: str
    slots: tuple[Slot, ...] = ()
    after: frozenset[str] = frozenset()
    unless: frozenset[str] = frozenset()
    then: tuple[Slot, ...] | None = None


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HASH_TYPE = Slot(_words("0 3 5 6 7 8 9 sha512"))
_CLEAR_OR_7 = Slot(_words("0 7"))
_KEY_NUMBER = Slot(frozenset({NUMBER}))
_DIGESTS = _words("md5 sha1 sha256 sha384 sha512")
_SNMP_AUTH = Slot(_words("md5 sha sha224 sha-224 sha256 sha-256 sha384 sha-384 sha512 sha-512 hmac-sha-2"), required=True)
_SNMP_PRIV = Slot(_words("des 3des aes aes128 aes-128 aes192 aes-192 aes256 aes-256"))
_SNMP_LEVELS = _words("read write notify context")  # EOS/NX-OS ``snmp-server group G v3 priv read VIEW``: no secret

LOCAL_USERS = (
    Form("secret", (_HASH_TYPE,)),  # EOS username/enable secret; Cumulus TACACS/RADIUS secret
    Form("password", (_HASH_TYPE,)),  # every NOS: username/enable password, BGP neighbor password
    Form("hashed-password", (_HASH_TYPE,)),  # Cumulus NVUE
)
AAA_KEYS = (
    Form("key", (_HASH_TYPE,), unless=_words("chain")),  # tacacs-server/radius-server key
    Form("passkey", (_HASH_TYPE,)),
    Form("key-string", (_CLEAR_OR_7,)),
)
ROUTING_KEYS = (
    Form("authentication-key", (_KEY_NUMBER, Slot(_DIGESTS), _CLEAR_OR_7)),  # ntp and OSPF
    Form("message-digest-key", (_KEY_NUMBER, Slot(_DIGESTS, required=True), _CLEAR_OR_7)),  # OSPF
    Form("area-password", (Slot(_words("clear md5")),)),  # FRR isisd
    Form("domain-password", (Slot(_words("clear md5")),)),
)
SNMP = (
    Form("community", after=_words("snmp-server")),
    Form("readonly-community"),
    Form("readwrite-community"),
    Form("community-string"),
    Form("auth", (_SNMP_AUTH,)),  # EOS / NX-OS / MLNX-OS snmp-server user … auth ALG KEY
    Form("priv", (_SNMP_PRIV,), unless=_SNMP_LEVELS),  # … priv [ALG] KEY
)
NVUE_SNMP = tuple(Form(word) for word in ("auth-md5", "auth-sha", "encrypt-des", "encrypt-aes"))
NET_SNMP = (Form("createuser", (Slot(frozenset({ANY}), required=True), _SNMP_AUTH), then=(Slot(_words("des aes"), required=True),)),)
CONFIG_DB = tuple(
    Form(field)
    for field in (
        "auth_password",
        "auth_key",
        "shared_secret",
        "snmp_user_auth_password",
        "snmp_user_encryption_password",
        "primary_cak",
        "fallback_cak",
    )
)
"""config_db secret fields read as ``"FIELD": "VALUE"`` tokens, for JSON the string lexer cannot follow (a stray quote)."""
ASSIGNED = frozenset({"secret", "password", "passkey", "key"})
"""``NAME=VALUE`` tokens whose value is a secret (``/etc/tacplus_servers``: ``secret=VALUE``)."""

FORMS: dict[str, tuple[Form, ...]] = {
    "eos": (*LOCAL_USERS, *AAA_KEYS, *ROUTING_KEYS, *SNMP),
    "nxos": (*LOCAL_USERS, *AAA_KEYS, *ROUTING_KEYS, *SNMP),
    "cumulus": (*LOCAL_USERS, *AAA_KEYS, *ROUTING_KEYS, *SNMP, *NVUE_SNMP, *NET_SNMP),
    "frr": (*LOCAL_USERS, *AAA_KEYS, *ROUTING_KEYS),
    "sonic": (*LOCAL_USERS, *AAA_KEYS, *ROUTING_KEYS, *SNMP, *NET_SNMP, *CONFIG_DB),  # the vtysh lines; config_db fields below
    "mlnx-os": (*LOCAL_USERS, *AAA_KEYS, *ROUTING_KEYS, *SNMP),
}

SONIC_FIELDS = frozenset(
    {
        "passkey",
        "password",
        "auth_password",
        "auth_key",
        "secret",
        "key",
        "shared_secret",
        "community",
        "snmp_user_auth_password",
        "snmp_user_encryption_password",
        "primary_cak",
        "fallback_cak",
    }
)
"""config_db fields (lower case) whose value is a secret."""
SONIC_SECRET_TABLES = frozenset({"SNMP_COMMUNITY"})
"""config_db tables whose entry names are secrets."""
