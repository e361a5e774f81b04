"""Tables that reflow into stacked rows on a phone: the staging step labels each body cell of a chapter's
table with its column's header (``pages.label_table_cells``), which ``book/_static/jalapeno.css`` shows
before the value below 600 px."""

from __future__ import annotations

from html.parser import HTMLParser

import nbformat

from jalapeno.publish import pages

TABLE = """<div class="jalapeno-table"><div id="tbl-x" style="overflow-x:auto;">
<table class="gt_table">
<thead>
<tr class="gt_col_headings">
  <th class="gt_col_heading" scope="col" id="tbl-x-chip">chip</th>
  <th class="gt_col_heading" scope="col" id="tbl-x-tdp_w">TDP <span>(W)</span></th>
  <th class="gt_col_heading" scope="col" id="tbl-x-note"></th>
</tr>
</thead>
<tbody class="gt_table_body">
  <tr>
    <td headers="tbl-x-chip" class="gt_row gt_left">GB200</td>
    <td headers="tbl-x-tdp_w" class="gt_row gt_right">1,200</td>
    <td headers="tbl-x-note" class="gt_row gt_left">a &amp; b</td>
  </tr>
  <tr><td class="gt_row">H100</td><td class="gt_row">700</td><td class="gt_row">—</td></tr>
</tbody>
</table>
</div></div>"""


class _Cells(HTMLParser):
    """(data-label or None, text) of every body <td>."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[list] = []
        self.body = False

    def handle_starttag(self, tag, attrs):
        if tag == "tbody":
            self.body = True
        elif tag == "td" and self.body:
            self.cells.append([dict(attrs).get("data-label"), ""])

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.body = False

    def handle_data(self, data):
        if self.cells and self.body:
            self.cells[-1][1] += data.strip()


def cells(text: str) -> list[tuple[str | None, str]]:
    p = _Cells()
    p.feed(text)
    return [tuple(c) for c in p.cells]


def test_each_body_cell_is_labelled_with_its_column_header():
    out = pages.label_table_cells(TABLE)
    # by the headers attribute (the header's text content, its <span> included) and, without it, by position
    assert cells(out) == [("chip", "GB200"), ("TDP (W)", "1,200"), ("", "a & b"),
                          ("chip", "H100"), ("TDP (W)", "700"), ("", "—")]
    assert '<td headers="tbl-x-chip" class="gt_row gt_left" data-label="chip">GB200</td>' in out
    # only the cells' start tags change: removing the labels gives the input back
    assert out.replace(' data-label="chip"', "").replace(' data-label="TDP (W)"', "").replace(' data-label=""', "") == TABLE
    assert pages.label_table_cells(out) == out  # labelling twice changes nothing


def test_a_header_with_quotes_is_escaped_and_colspan_counts():
    table = ('<div class="jalapeno-table"><table><thead><tr><th colspan="2">a "b"</th><th>c</th></tr></thead>'
             '<tbody><tr><td>1</td><td>2</td><td>3</td></tr></tbody></table></div>')
    out = pages.label_table_cells(table)
    assert cells(out) == [('a "b"', "1"), ('a "b"', "2"), ("c", "3")]
    assert 'data-label="a &quot;b&quot;"' in out


def test_tables_outside_a_jalapeno_table_are_left_alone():
    other = "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>"
    assert pages.label_table_cells(other) == other
    assert pages.label_table_cells(other + "\n" + TABLE).startswith(other + "\n")


def test_the_staged_notebook_has_labelled_tables_and_other_outputs_unchanged():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("t", outputs=[
        nbformat.v4.new_output("display_data", data={"text/html": TABLE.splitlines(keepends=True), "text/plain": "x"}),
        nbformat.v4.new_output("display_data", data={"text/html": "<p>no table</p>"})])]
    pages.label_notebook_tables(nb)
    html = nb.cells[0].outputs[0].data["text/html"]
    assert [label for label, _ in cells(html)] == ["chip", "TDP (W)", "", "chip", "TDP (W)", ""]
    assert nb.cells[0].outputs[0].data["text/plain"] == "x"
    assert nb.cells[0].outputs[1].data["text/html"] == "<p>no table</p>"


def unlabelled_cells(page_html: str) -> tuple[int, list[str]]:
    """How many body cells the tables of div.jalapeno-table hold in a built page, and the start tag of
    each one without a data-label."""

    class Check(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.depth, self.body, self.count, self.missing = 0, False, 0, []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "div" and (self.depth or "jalapeno-table" in (a.get("class") or "").split()):
                self.depth += 1
            elif self.depth and tag == "tbody":
                self.body = True
            elif self.depth and self.body and tag == "td":
                self.count += 1
                if "data-label" not in a:
                    self.missing.append(self.get_starttag_text())

        def handle_endtag(self, tag):
            if self.depth and tag == "div":
                self.depth -= 1
            elif tag == "tbody":
                self.body = False

    c = Check()
    c.feed(page_html)
    return c.count, c.missing


def test_every_cell_of_every_table_of_the_built_book_has_its_label(built_book):
    counted = 0
    for page in sorted((built_book / "chapters").glob("*.html")):
        count, missing = unlabelled_cells(page.read_text())
        assert missing == [], (page.name, missing[:3])
        counted += count
    assert counted > 100  # the chapters' tables were found (roofline alone has hundreds of cells)
