"""bench.cuda_profile's summary of Nsight Compute's CSV (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

from bench.cuda_profile import summarize

HEAD = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context",'
    '"Stream","Block Size","Grid Size","Device","CC","Section Name",'
    '"Metric Name","Metric Unit","Metric Value"'
)


def _row(i: int, kernel: str, section: str, name: str, unit: str, value: str) -> str:
    cells = [str(i), "1", "python3", "h", kernel, "1", "7", "(256, 1, 1)"]
    cells += ["(8, 1, 1)", "0", "9.0", section, name, unit, value]
    return ",".join(f'"{c}"' for c in cells)


def test_one_row_per_launch_in_microseconds(tmp_path: Path) -> None:
    sol, mem = "GPU Speed Of Light Throughput", "Memory Workload Analysis"
    lines = [
        "==PROF== Connected to process 1",
        HEAD,
        _row(0, "mm_k0", sol, "Duration", "ns", "749,792"),
        _row(0, "mm_k0", sol, "Memory Throughput", "%", "81.70"),
        _row(0, "mm_k0", mem, "Memory Throughput", "byte/s", "1,302,512"),
        _row(0, "mm_k0", "Launch Statistics", "Registers Per Thread", "", "64"),
        "==PROF== Disconnected from process 1",
        _row(1, "sm_k0", sol, "Duration", "ms", "1.5"),
    ]
    path = tmp_path / "ncu.csv"
    path.write_text("\n".join(lines) + "\n")
    table = summarize(path).splitlines()
    assert table[0].startswith("| id | kernel | µs | SM % | mem % |")
    cells = [c.strip() for c in table[2].split("|")]
    assert cells[1:6] == ["0", "mm_k0", "749.8", "", "81.70"]  # the share, not the rate
    assert "| 64 |" in table[2]
    assert [c.strip() for c in table[3].split("|")][1:4] == ["1", "sm_k0", "1500.0"]


def test_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "ncu.csv"
    path.write_text("==ERROR== the application returned an error\n")
    assert summarize(path) == "no ncu rows found"
