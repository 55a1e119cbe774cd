"""The cabling read-back (``verify --cabling``): each device's LLDP (or InfiniBand) neighbours, read live or from
recorded replies, compared with the plan's cables (``cabling.csv``) and diagnosed per rail in plain words.

``parse``: one parser per NOS reply form (pure); ``ib``: ibnetdiscover / iblinkinfo; ``compare``: the plan's cables
against what was seen, with the diagnosis; ``collect``: reading the replies (a directory of files, live sessions).
"""
