-- What callers that nobody vouches for (UCP agents, callers of an open
-- /acp/mcp) may store under idempotency keys (package idempotency): the new
-- keys each budget (the SHA-256, hex, of a client address) has claimed in
-- each hour, refused past a cap, swept with the keys after their 24 hours.

-- +goose Up
CREATE TABLE idempotency_budgets (
    budget TEXT      NOT NULL,
    hour   TIMESTAMP NOT NULL,
    used   INTEGER   NOT NULL,
    PRIMARY KEY (budget, hour)
);

-- +goose Down
DROP TABLE idempotency_budgets;
