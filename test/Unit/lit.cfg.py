# -*- Python -*-
# Runs every GoogleTest binary under build/unittests as lit tests.
import os

import lit.formats

config.name = "autoshard-unit"
config.suffixes = []
config.test_source_root = os.path.join(config.autoshard_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
for var in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
    config.environment[var] = "1"
