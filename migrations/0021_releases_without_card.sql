-- Every start looks for the releases stored before cards existed (migration 0008) to give
-- them one (ingest.BackfillCards). Without an index that is a scan of every release row:
-- about 30 ms at 50k releases, on every start, for rows that are almost never there. The
-- partial index holds only the rows without a card, so the look is one probe.
CREATE INDEX releases_without_card ON releases (id) WHERE card IS NULL;
