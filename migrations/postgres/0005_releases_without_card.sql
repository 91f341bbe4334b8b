-- Every start looks for the releases stored before cards existed (ingest.BackfillCards):
-- the partial index holds only the rows without a card, so the look is one probe rather
-- than a scan of every release row.
CREATE INDEX releases_without_card ON releases (id) WHERE card IS NULL;
