"""Running agents on a Ray cluster (`agent-host run --executor ray`): same config, same outcomes.

The driver (`executor`) compiles each component once and ships it (`shipping`), then runs every
agent on a pool of Ray actors (`worker`), one agent per actor at a time, each actor a whole host of
its own (runtime, bridge, the toolings its agents use). What an agent produces comes back to the
driver as it happens (`messages`); the driver writes the one audit log and prints as locally.
`connection` starts or joins Ray. Only this package imports `ray`, and only when it is used.
"""
