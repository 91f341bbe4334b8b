-- Identity-token ids (the JWT "jti") that trusted publishing has exchanged, each kept until
-- its token expires: an OIDC token is single-use, across restarts and across replicas that
-- share this database. Rows of expired tokens are deleted by the next exchange.
CREATE TABLE oidc_jti (
    issuer     TEXT NOT NULL CHECK (issuer <> ''),
    jti        TEXT NOT NULL CHECK (jti <> '' AND length(jti) <= 256),
    expires_at TEXT NOT NULL,  -- RFC 3339 UTC, the token's exp
    used_at    TEXT NOT NULL,
    PRIMARY KEY (issuer, jti)
) STRICT;

CREATE INDEX oidc_jti_expires ON oidc_jti (expires_at);
