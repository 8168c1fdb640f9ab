"""Reports: tables for the terminal, JSON and CSV."""

from ndpkit.report.table import Column, Table, cell, jsonable, rows_of, to_csv, to_json, to_rich

__all__ = ["Column", "Table", "cell", "jsonable", "rows_of", "to_csv", "to_json", "to_rich"]
