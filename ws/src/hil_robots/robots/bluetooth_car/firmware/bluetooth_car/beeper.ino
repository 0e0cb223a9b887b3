/* The reversing beeper: a passive buzzer on pin 8, BEEP_HZ for BEEP_MS every
 * BEEP_EVERY_MS while the car backs up (tone() with a duration stops by itself). */
#define BUZZER 8
#define BEEP_HZ 2000
#define BEEP_MS 250
#define BEEP_EVERY_MS 500

static unsigned long next_beep_ms = 0;
static bool beeping = false;

void beep_while(bool reversing) {
  unsigned long now = millis();
  if (!reversing) {
    if (beeping) {
      noTone(BUZZER);
      beeping = false;
    }
    return;
  }
  if (!beeping || (long)(now - next_beep_ms) >= 0) {
    tone(BUZZER, BEEP_HZ, BEEP_MS);
    next_beep_ms = now + BEEP_EVERY_MS;
    beeping = true;
  }
}
