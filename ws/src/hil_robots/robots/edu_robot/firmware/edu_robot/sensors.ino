/* Two analog IR line sensors (high over the dark tape) and the mode button on A7. */
#define LINE_LEFT A0
#define LINE_RIGHT A1
#define MODE_BUTTON A7
#define LINE_THRESHOLD 500
#define BUTTON_DOWN_ABOVE 800 /* pressed: the button pulls A7 to 5 V */
#define BUTTON_STEADY 3       /* reads in a row that make a press (debounce) */

static uint8_t down_reads = 0;

bool line_left() { return analogRead(LINE_LEFT) > LINE_THRESHOLD; }

bool line_right() { return analogRead(LINE_RIGHT) > LINE_THRESHOLD; }

/* True once per press: when A7 has read high BUTTON_STEADY times in a row. */
bool button_pressed() {
  if (analogRead(MODE_BUTTON) <= BUTTON_DOWN_ABOVE) {
    down_reads = 0;
    return false;
  }
  if (down_reads < BUTTON_STEADY) {
    down_reads++;
    return down_reads == BUTTON_STEADY;
  }
  return false;
}
