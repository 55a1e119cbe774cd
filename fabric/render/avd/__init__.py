"""Arista AVD structured config (pyavd ``eos_cli_config_gen`` schema): compute and storage / in-band EOS switches."""
