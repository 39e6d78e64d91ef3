-- The OpenID provider's user an account is linked to at its first sign-in there (README,
-- Sign-in with OpenID Connect): its issuer and `sub`, both null until then.
ALTER TABLE users ADD COLUMN oidc_issuer text, ADD COLUMN oidc_subject text;
