"""Community SONiC: ``config_db.json`` (compute, QoS and buffers, storage / in-band, OOB) and FRR for BGP."""
