// The shipping address: a complete one as two lines of text with Change;
// the form only when the address is missing, wrong or being changed, its
// country a list of the countries the merchant ships to, named in the
// buyer's language. A linked buyer chooses whether the shop keeps it.

import type { Address, AddressField } from "../lib/data";
import { addressLines, countryName } from "../lib/format";
import { t, type Key } from "../lib/i18n";

export interface Form extends Address {
  email: string;
}

type Field = { key: AddressField | "email"; label: Key; auto: string; type?: "email" | "tel"; full?: boolean };

const fields: Field[] = [
  { key: "name", label: "fieldName", auto: "shipping name", full: true },
  { key: "email", label: "fieldEmail", auto: "email", type: "email", full: true },
  { key: "country", label: "fieldCountry", auto: "shipping country", full: true },
  { key: "line_one", label: "fieldLineOne", auto: "shipping address-line1", full: true },
  { key: "line_two", label: "fieldLineTwo", auto: "shipping address-line2", full: true },
  { key: "postal_code", label: "fieldPostal", auto: "shipping postal-code" },
  { key: "city", label: "fieldCity", auto: "shipping address-level2" },
  { key: "state", label: "fieldState", auto: "shipping address-level1" },
  { key: "phone_number", label: "fieldPhone", auto: "shipping tel", type: "tel" },
];

// withState are the countries whose addresses name a state, province or
// prefecture; elsewhere the field shows only when it holds something.
const withState = new Set(["US", "CA", "AU", "BR", "MX", "IN", "JP", "CN", "AR", "MY"]);

// cityFirst are the countries whose addresses write the city before the postal code.
const cityFirst = new Set(["US", "CA", "AU", "GB"]);

/** fieldParam is the JSONPath a session message names a form field by. */
export function fieldParam(key: string): string {
  return key === "email" ? "$.buyer.email" : "$.fulfillment_address." + key;
}

/** countryOf is the shipping country a new form starts with: the buyer's locale's region when the shop ships there. */
export function countryOf(locale: string, countries: string[]): string {
  if (countries.length === 1) return countries[0];
  const region = locale.split(/[-_]/).slice(1).find((p) => /^[A-Za-z]{2}$/.test(p))?.toUpperCase() ?? "";
  return countries.includes(region) ? region : "";
}

export function AddressForm({ form, errors, busy, countries, locale, editing, onInput, onSubmit, onCancel }: {
  form: Form;
  errors: Record<string, string>;
  busy: boolean;
  countries: string[];
  locale: string;
  /** editing: a complete address is being changed (Cancel shows it again). */
  editing: boolean;
  onInput(key: keyof Form, value: string): void;
  onSubmit(): void;
  onCancel(): void;
}) {
  const names = [...new Set([...countries, ...(form.country ? [form.country] : [])])]
    .map((c) => [c, countryName(c, locale)] as const)
    .sort((a, b) => a[1].localeCompare(b[1], locale));
  let shown = fields.filter((f) => f.key !== "state" || withState.has(form.country) || form.state || errors[fieldParam("state")]);
  // "City, ST 12345" where the country writes it so; elsewhere "12345 City".
  if (cityFirst.has(form.country)) {
    const town = ["city", "state", "postal_code"].map((k) => shown.find((f) => f.key === k)).filter((f): f is Field => !!f);
    shown = shown.filter((f) => !town.includes(f)).flatMap((f) => (f.key === "line_two" ? [f, ...town] : [f]));
  }
  return (
    <form
      class="form"
      aria-label={t("shippingAddress")}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {shown.map((f) => {
        const id = "addr-" + f.key;
        const err = errors[fieldParam(f.key)];
        const common = {
          id,
          name: f.key,
          autoComplete: f.auto,
          "aria-invalid": err ? ("true" as const) : undefined,
          "aria-describedby": err ? id + "-error" : undefined,
        };
        return (
          <div class={f.full ? "full" : ""} key={f.key}>
            <label for={id}>{t(f.label)}</label>
            {f.key === "country" && names.length > 0 ? (
              <select {...common} value={form.country} onChange={(e) => onInput("country", (e.target as HTMLSelectElement).value)}>
                {!form.country && <option value="">{t("chooseCountry")}</option>}
                {names.map(([c, n]) => (
                  <option value={c} key={c}>
                    {n}
                  </option>
                ))}
              </select>
            ) : (
              <input
                {...common}
                type={(f.type ?? "text") as "text"}
                maxLength={f.key === "country" ? 2 : 200}
                value={form[f.key]}
                onInput={(e) => onInput(f.key, (e.target as HTMLInputElement).value)}
                onKeyDown={(e) => {
                  if (e.key === "Enter") {
                    e.preventDefault();
                    onSubmit();
                  }
                }}
              />
            )}
            {err && (
              <p class="field-error" id={id + "-error"}>
                {err}
              </p>
            )}
          </div>
        );
      })}
      <div class="full row" style={{ justifyContent: "flex-start" }}>
        <button type="button" id="save-address" class="btn" disabled={busy} onClick={onSubmit}>
          {busy ? t("saving") : t("saveAddress")}
        </button>
        {editing && (
          <button type="button" id="cancel-address" class="linkbtn" disabled={busy} onClick={onCancel}>
            {t("cancelChange")}
          </button>
        )}
      </div>
    </form>
  );
}

/** AddressText is a complete address as text: the name and email, then the address in its country's order. */
export function AddressText({ address, email, locale, busy, onChange }: { address: Address; email: string; locale: string; busy: boolean; onChange(): void }) {
  const [street, town] = addressLines(address, locale);
  return (
    <div class="address-text row" id="address-text" style={{ alignItems: "flex-start", flexWrap: "nowrap" }}>
      <address style={{ fontStyle: "normal", minWidth: 0 }}>
        <div>
          {address.name} {email && <span class="muted nowrap">{email}</span>}
        </div>
        <div class="muted">{[street, town].filter(Boolean).join(", ")}</div>
      </address>
      <button type="button" id="change-address" class="linkbtn" disabled={busy} aria-label={t("change") + ": " + t("shippingAddress")} onClick={onChange}>
        {t("change")}
      </button>
    </div>
  );
}

/** SaveToAccount is a linked buyer's choice to keep this address in their account (save_address). */
export function SaveToAccount({ checked, busy, onChange }: { checked: boolean; busy: boolean; onChange(v: boolean): void }) {
  return (
    <label class="check" for="save-address-account">
      <input id="save-address-account" type="checkbox" checked={checked} disabled={busy} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} />{" "}
      {t("saveToAccount")}
    </label>
  );
}
