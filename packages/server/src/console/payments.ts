/**
 * The payment-provider port (issue 16, "Billing"; docs/console.md, "Payment providers"). Buying a
 * pack records a purchase, asks the provider, and credits the balance only when the provider says
 * the payment is complete (at once, or later through the provider's own confirmation route, which
 * calls `completePurchase` in billing.ts). The operator picks the provider with
 * VITALS_CONSOLE_PAYMENTS; nothing here talks to a real processor.
 */
export interface PackToBuy {
  id: string;
  priceUsd: number;
  tokensUsd: number;
}

export interface PurchaseRequest {
  purchaseId: string;
  orgId: string;
  accountId: string;
  pack: PackToBuy;
}

export type PurchaseOutcome =
  | { status: 'completed'; reference: string | null }
  /** The processor confirms later (its webhook then completes the purchase); `redirectUrl` for a checkout page. */
  | { status: 'pending'; reference: string | null; redirectUrl?: string }
  | { status: 'failed'; reason: string };

export interface PaymentProvider {
  /** Shown in the console (`purchase.provider`). */
  readonly name: string;
  /** False: the Buy buttons are disabled and a purchase is 403 `forbidden`. */
  readonly enabled: boolean;
  purchase(req: PurchaseRequest): Promise<PurchaseOutcome>;
}

/** No provider (the default): purchases are off. */
export const noPayments: PaymentProvider = {
  name: 'none',
  enabled: false,
  purchase: async () => ({ status: 'failed', reason: 'purchases are not enabled on this server' }),
};

/**
 * The operator settles payment outside the service (invoice, private deployment, tests): a
 * purchase is complete at once and credits the pack's tokens.
 */
export const manualPayments: PaymentProvider = {
  name: 'manual',
  enabled: true,
  purchase: async () => ({ status: 'completed', reference: null }),
};

export const PAYMENT_PROVIDERS = ['none', 'manual'] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDERS)[number];

export function paymentProviderFor(name: PaymentProviderName): PaymentProvider {
  return name === 'manual' ? manualPayments : noPayments;
}
