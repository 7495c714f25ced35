-- A sign-in code's email keeps the code in its body; accounts.Sweep deletes
-- those emails once the code has expired (notify.Forget), and this index
-- finds them without reading every email.

-- +goose Up
CREATE INDEX emails_login_code ON emails (created_at) WHERE kind = 'login_code';

-- +goose Down
DROP INDEX emails_login_code;
