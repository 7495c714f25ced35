// Small controls both widgets use. Every control has an accessible name.

import type { ComponentChildren } from "preact";
import { t } from "./i18n";

export const MAX_QUANTITY = 999;

interface StepperProps {
  /** label names what is counted, for screen readers ("Quantity of Enamel Mug"). */
  label: string;
  value: number;
  min?: number;
  max?: number;
  disabled?: boolean;
  onChange(n: number): void;
}

/** Stepper is a quantity with − and + buttons; the number can be typed too. */
export function Stepper({ label, value, min = 1, max = MAX_QUANTITY, disabled, onChange }: StepperProps) {
  const set = (n: number) => {
    if (Number.isFinite(n)) onChange(Math.min(Math.max(Math.trunc(n), min), Math.max(min, max)));
  };
  return (
    <div class="stepper" role="group" aria-label={label}>
      <button type="button" aria-label={t("decrease", { label })} disabled={disabled || value <= min} onClick={() => set(value - 1)}>
        −
      </button>
      <input
        type="number"
        inputMode="numeric"
        aria-label={label}
        min={min}
        max={max}
        value={value}
        disabled={disabled}
        onChange={(e) => set(parseInt((e.target as HTMLInputElement).value, 10))}
      />
      <button type="button" aria-label={t("increase", { label })} disabled={disabled || value >= max} onClick={() => set(value + 1)}>
        +
      </button>
    </div>
  );
}

/** Status is a polite live region: what just happened, or what went wrong. */
export function Status({ text, error }: { text: string; error?: boolean }) {
  return (
    <p class={error ? "status error" : "status"} role={error ? "alert" : "status"} aria-live={error ? "assertive" : "polite"}>
      {text}
    </p>
  );
}

/** Img shows an image of the shop, or a neutral box when there is none. */
export function Img({ src, alt, class: cls }: { src: string; alt: string; class?: string }) {
  return src ? <img class={cls} src={src} alt={alt} loading="lazy" decoding="async" /> : <div class={cls + " noimg"} aria-hidden="true" />;
}

export function Card({ children, label }: { children: ComponentChildren; label: string }) {
  return (
    <section class="card" aria-label={label}>
      {children}
    </section>
  );
}
