"""TPC benchmark tables: TPC-H via tpchgen-cli, TPC-C ORDER-LINE generated here, their sizes
at any scale factor, and the NASCENT2 paper's TPC-H column analysis (experiment E8)."""

from ndpkit.tpc.shape import SHAPED_TABLES, TableShape, table_shape
from ndpkit.tpc.tpcc import generate_tpcc, order_line
from ndpkit.tpc.tpch import TPCH_TABLES, GeneratedTable, find_tpchgen, generate_tpch

__all__ = [
    "SHAPED_TABLES",
    "TPCH_TABLES",
    "GeneratedTable",
    "TableShape",
    "find_tpchgen",
    "generate_tpcc",
    "generate_tpch",
    "order_line",
    "table_shape",
]
