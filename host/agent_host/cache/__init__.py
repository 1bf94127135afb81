"""The cache folder (`paths.cache_dir()`): guest builds and compiled components that bound themselves.

`contents` says what is there (entries: a build with its compiled artifacts), `bounds` what stays
(newest `keep` per guest, a size cap; `prune` after every build and compile, `clean` on request) and
`locks` what a running host uses: each process pins (shared `flock`) the files it uses, and the pruner
removes only files it can lock exclusively without waiting, so nothing in use is ever removed.
`private` makes and checks its folders before anything in them is trusted: the user's alone.
"""

from agent_host.cache.bounds import DEFAULT_KEEP as DEFAULT_KEEP
from agent_host.cache.bounds import DEFAULT_MAX as DEFAULT_MAX
from agent_host.cache.bounds import ENV_KEEP as ENV_KEEP
from agent_host.cache.bounds import ENV_MAX as ENV_MAX
from agent_host.cache.bounds import FRESH as FRESH
from agent_host.cache.bounds import Limits as Limits
from agent_host.cache.bounds import Removal as Removal
from agent_host.cache.bounds import auto_prune as auto_prune
from agent_host.cache.bounds import clean as clean
from agent_host.cache.bounds import in_use as in_use
from agent_host.cache.bounds import prune as prune
from agent_host.cache.bounds import select as select
from agent_host.cache.contents import Entry as Entry
from agent_host.cache.contents import Listing as Listing
from agent_host.cache.contents import mark_used as mark_used
from agent_host.cache.contents import record_source as record_source
from agent_host.cache.contents import scan as scan
from agent_host.cache.locks import pin as pin
from agent_host.cache.locks import pinned as pinned
from agent_host.cache.locks import publish as publish
from agent_host.cache.locks import turn as turn
from agent_host.cache.locks import unpin as unpin
from agent_host.cache.private import private_cache as private_cache
from agent_host.cache.private import private_folder as private_folder

__all__ = (
    "DEFAULT_KEEP",
    "DEFAULT_MAX",
    "ENV_KEEP",
    "ENV_MAX",
    "FRESH",
    "Entry",
    "Limits",
    "Listing",
    "Removal",
    "auto_prune",
    "clean",
    "in_use",
    "mark_used",
    "pin",
    "pinned",
    "private_cache",
    "private_folder",
    "prune",
    "publish",
    "record_source",
    "scan",
    "select",
    "turn",
    "unpin",
)
